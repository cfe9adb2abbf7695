// ScaleShift kernel class: y = x * scale + shift, fp16 computed in fp32.
#ifndef SCALE_SHIFT_H
#define SCALE_SHIFT_H
#include "kernel_operator.h"
#include "scale_shift_tiling_data.h"

namespace NsScaleShift {
using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;

template <typename T, bool ALIGNED>
class ScaleShift {
public:
    __aicore__ inline ScaleShift() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ScaleShiftTilingData* t)
    {
        const int64_t start = t->blockFactor * GetBlockIdx();
        const int64_t left = t->totalNum - start;
        length_ = left < t->blockFactor ? left : t->blockFactor;
        ub_ = t->ubFactor;
        scale_ = t->scale;
        shift_ = t->shift;
        xGm_.SetGlobalBuffer((__gm__ T*)x + start, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + start, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, ub_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, ub_ * sizeof(T));
        pipe_.InitBuffer(work_, ub_ * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (int64_t off = 0; off < length_; off += ub_) {
            const uint32_t n = static_cast<uint32_t>(length_ - off < ub_ ? length_ - off : ub_);
            LocalTensor<T> x = inQ_.AllocTensor<T>();
            if constexpr (ALIGNED) {
                DataCopy(x, xGm_[off], n);
            } else {
                DataCopyPad(x, xGm_[off], DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0},
                            DataCopyPadExtParams<T>{false, 0, 0, 0});
            }
            inQ_.EnQue(x);
            x = inQ_.DeQue<T>();
            LocalTensor<T> y = outQ_.AllocTensor<T>();
            if constexpr (std::is_same<T, float>::value) {
                Muls(y, x, scale_, n);
                Adds(y, y, shift_, n);
            } else {
                LocalTensor<float> w = work_.Get<float>();
                Cast(w, x, RoundMode::CAST_NONE, n);
                Muls(w, w, scale_, n);
                Adds(w, w, shift_, n);
                Cast(y, w, RoundMode::CAST_RINT, n);
            }
            inQ_.FreeTensor(x);
            outQ_.EnQue(y);
            y = outQ_.DeQue<T>();
            if constexpr (ALIGNED) {
                DataCopy(yGm_[off], y, n);
            } else {
                DataCopyPad(yGm_[off], y, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0});
            }
            outQ_.FreeTensor(y);
        }
    }

private:
    TPipe pipe_;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQ_;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQ_;
    TBuf<QuePosition::VECCALC> work_;
    GlobalTensor<T> xGm_, yGm_;
    int64_t length_ = 0, ub_ = 0;
    float scale_ = 1.0f, shift_ = 0.0f;
};
}  // namespace NsScaleShift
#endif
