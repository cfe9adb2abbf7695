// RowSoftmax kernel: rows padded to 32 bytes in UB (DataCopyPad), SoftMax over the valid columns with a work
// buffer of the size the tiling asked for, the padded rows copied back without their padding.
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
class KernelRowSoftmax {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const RowSoftmaxTilingData& t)
    {
        tiling = t;
        uint32_t first = tiling.rowsPerBlock * GetBlockIdx();
        rows = first >= tiling.rows ? 0 : (tiling.rows - first < tiling.rowsPerBlock ? tiling.rows - first : tiling.rowsPerBlock);
        xGm.SetGlobalBuffer((__gm__ T*)x + uint64_t(first) * tiling.cols);
        yGm.SetGlobalBuffer((__gm__ T*)y + uint64_t(first) * tiling.cols);
        pipe.InitBuffer(inQ, 1, tiling.rowsPerBlock * tiling.colsAligned * sizeof(T));
        pipe.InitBuffer(outQ, 1, tiling.rowsPerBlock * tiling.colsAligned * sizeof(T));
        pipe.InitBuffer(stats, 2 * tiling.rowsPerBlock * 32);
        pipe.InitBuffer(work, tiling.workBytes);
    }
    __aicore__ inline void Process()
    {
        if (rows == 0) return;
        DataCopyExtParams row{static_cast<uint16_t>(rows), static_cast<uint32_t>(tiling.cols * sizeof(T)), 0, 0, 0};
        LocalTensor<T> x = inQ.AllocTensor<T>();
        DataCopyPad(x, xGm, row, DataCopyPadExtParams<T>{true, 0, static_cast<uint8_t>(tiling.colsAligned - tiling.cols), 0});
        inQ.EnQue(x);
        x = inQ.DeQue<T>();
        LocalTensor<T> y = outQ.AllocTensor<T>();
        LocalTensor<T> maxT = stats.Get<T>();
        LocalTensor<T> sumT = maxT[tiling.rowsPerBlock * 32 / sizeof(T)];
        SoftMaxShapeInfo shape{rows, tiling.colsAligned, rows, tiling.cols};
        SoftMax<T>(y, sumT, maxT, x, work.Get<uint8_t>(), tiling.softmax, shape);
        outQ.EnQue(y);
        inQ.FreeTensor(x);
        y = outQ.DeQue<T>();
        DataCopyPad(yGm, y, row);
        outQ.FreeTensor(y);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<QuePosition::VECCALC> stats, work;
    GlobalTensor<T> xGm, yGm;
    RowSoftmaxTilingData tiling;
    uint32_t rows = 0;
};

extern "C" __global__ __aicore__ void row_softmax(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelRowSoftmax<DTYPE_X> op;
    op.Init(x, y, tilingData);
    op.Process();
}
