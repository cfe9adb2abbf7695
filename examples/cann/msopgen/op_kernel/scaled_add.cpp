// ScaledAdd kernel (msOpGen layout): compiled per dtype with DTYPE_X / DTYPE_Y / DTYPE_Z, reads the struct
// declared in op_host/scaled_add_tiling.h with GET_TILING_DATA. fp16 I/O computes in fp32.
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

template <typename T>
class KernelScaledAdd {
public:
    __aicore__ inline KernelScaledAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t blockLength,
                                uint32_t tileLength, float alpha)
    {
        uint32_t start = blockLength * GetBlockIdx();
        this->length = start >= total ? 0 : (total - start < blockLength ? total - start : blockLength);
        this->tileLength = tileLength;
        this->alpha = alpha;
        xGm.SetGlobalBuffer((__gm__ T*)x + start, this->length);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, this->length);
        zGm.SetGlobalBuffer((__gm__ T*)z + start, this->length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(T));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(T));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(T));
        if constexpr (!std::is_same<T, float>::value) {
            pipe.InitBuffer(xf, tileLength * sizeof(float));
            pipe.InitBuffer(yf, tileLength * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        for (uint32_t done = 0; done < length; done += tileLength) {
            uint32_t n = length - done < tileLength ? length - done : tileLength;
            CopyIn(done, n);
            Compute(n);
            CopyOut(done, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t n)
    {
        LocalTensor<T> x = inQueueX.AllocTensor<T>();
        LocalTensor<T> y = inQueueY.AllocTensor<T>();
        if (TILING_KEY_IS(1)) {
            DataCopy(x, xGm[offset], n);
            DataCopy(y, yGm[offset], n);
        } else {
            DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, xGm[offset], p, pad);
            DataCopyPad(y, yGm[offset], p, pad);
        }
        inQueueX.EnQue(x);
        inQueueY.EnQue(y);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<T> x = inQueueX.DeQue<T>();
        LocalTensor<T> y = inQueueY.DeQue<T>();
        LocalTensor<T> z = outQueueZ.AllocTensor<T>();
        if constexpr (std::is_same<T, float>::value) {
            Muls(y, y, alpha, n);
            Add(z, x, y, n);
        } else {
            LocalTensor<float> a = xf.Get<float>();
            LocalTensor<float> b = yf.Get<float>();
            Cast(a, x, RoundMode::CAST_NONE, n);
            Cast(b, y, RoundMode::CAST_NONE, n);
            Muls(b, b, alpha, n);
            Add(a, a, b, n);
            Cast(z, a, RoundMode::CAST_ROUND, n);
        }
        outQueueZ.EnQue(z);
        inQueueX.FreeTensor(x);
        inQueueY.FreeTensor(y);
    }
    __aicore__ inline void CopyOut(uint32_t offset, uint32_t n)
    {
        LocalTensor<T> z = outQueueZ.DeQue<T>();
        if (TILING_KEY_IS(1)) {
            DataCopy(zGm[offset], z, n);
        } else {
            DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(zGm[offset], z, p);
        }
        outQueueZ.FreeTensor(z);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    TBuf<QuePosition::VECCALC> xf, yf;
    GlobalTensor<T> xGm, yGm, zGm;
    uint32_t length = 0, tileLength = 0;
    float alpha = 1.0f;
};

extern "C" __global__ __aicore__ void scaled_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelScaledAdd<DTYPE_X> op;
    op.Init(x, y, z, tilingData.totalLength, tilingData.blockLength, tilingData.tileLength, tilingData.alpha);
    op.Process();
}
