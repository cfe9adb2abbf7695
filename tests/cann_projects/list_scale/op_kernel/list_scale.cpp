// ListScale kernel: block i scales tensor i of the list x into tensor i of the list y. Each list is one GM
// address holding a ListTensorDesc (the layout CANN's runtime passes a DYNAMIC parameter in).
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
class KernelListScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ListScaleTilingData& t)
    {
        tiling = t;
        const uint32_t i = GetBlockIdx();
        ListTensorDesc xs(reinterpret_cast<__gm__ void*>(x));
        ListTensorDesc ys(reinterpret_cast<__gm__ void*>(y));
        length = tiling.lengths[i];
        scale = tiling.scales[i];
        xGm.SetGlobalBuffer(xs.GetDataPtr<T>(i), length);
        yGm.SetGlobalBuffer(ys.GetDataPtr<T>(i), length);
        pipe.InitBuffer(inQ, 1, tiling.tile * sizeof(T));
        pipe.InitBuffer(outQ, 1, tiling.tile * sizeof(T));
        pipe.InitBuffer(work, tiling.tile * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t off = 0; off < length; off += tiling.tile) {
            const uint32_t n = length - off < tiling.tile ? length - off : tiling.tile;
            DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            LocalTensor<T> x = inQ.AllocTensor<T>();
            DataCopyPad(x, xGm[off], p, DataCopyPadExtParams<T>{false, 0, 0, 0});
            inQ.EnQue(x);
            x = inQ.DeQue<T>();
            LocalTensor<T> y = outQ.AllocTensor<T>();
            LocalTensor<float> f = work.Get<float>();
            if constexpr (std::is_same_v<T, float>) {
                Muls(y, x, scale, n);
                Adds(y, y, tiling.bias, n);
            } else {
                Cast(f, x, RoundMode::CAST_NONE, n);
                Muls(f, f, scale, n);
                Adds(f, f, tiling.bias, n);
                Cast(y, f, RoundMode::CAST_ROUND, n);
            }
            inQ.FreeTensor(x);
            outQ.EnQue(y);
            y = outQ.DeQue<T>();
            DataCopyPad(yGm[off], y, p);
            outQ.FreeTensor(y);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<QuePosition::VECCALC> work;
    GlobalTensor<T> xGm, yGm;
    ListScaleTilingData tiling;
    uint32_t length = 0;
    float scale = 1.0f;
};

extern "C" __global__ __aicore__ void list_scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelListScale<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}
