// The element-wise steps of an inference plan that cuDNN and cuBLAS do not
// take (src/infer/backend/cuda_plan/): widening the int8 planes to
// channels-last, the globals, a dense layer's bias and activation, and a
// convolution's bias, skip input and activation where cuDNN's fused op
// cannot apply it. Each comes in f32 and bf16 storage; arithmetic is f32.
// Twin: src/infer/plan/twin.rs (the same values, op by op, on the CPU).
//
// bf16 is handled as its bits, rounded to nearest even as the CPU twin's
// Precision::store rounds, so no toolkit header is needed.

#include "bf16.cuh"

// PlanAct: 0 identity, 1 ReLU, 2 tanh, 3 sigmoid, 4 Elliott (b x / (1 + |b x|)).
__device__ __forceinline__ float activate(float x, int act, float coef) {
  switch (act) {
  case 1:
    return fmaxf(x, 0.0f);
  case 2:
    return tanhf(x);
  case 3:
    return 1.0f / (1.0f + expf(-x));
  case 4: {
    float bx = coef * x;
    return bx / (1.0f + fabsf(bx));
  }
  default:
    return x;
  }
}

#define GRID_LOOP(i, n)                                                                            \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n);                   \
       i += (long long)gridDim.x * blockDim.x)

// int8 planes [rows][C][H*W] as [rows][H*W][C]. The host pads the batch to
// its bucket with zero rows, so a captured graph never depends on `rows`.
template <typename T>
__device__ void widen(const signed char *src, T *dst, long long rows, int c, int hw) {
  long long n = rows * hw * c;
  GRID_LOOP(i, n) {
    int ch = (int)(i % c);
    long long t = i / c;
    int pt = (int)(t % hw);
    long long r = t / hw;
    store(dst, i, (float)src[(r * c + ch) * hw + pt]);
  }
}

template <typename T> __device__ void globals(const float *src, T *dst, long long n) {
  GRID_LOOP(i, n) { store(dst, i, src[i]); }
}

// dst = act(y + bias), y the f32 product [rows][width].
template <typename T>
__device__ void bias_act(const float *y, const float *bias, T *dst, long long n, int width,
                         int act, float coef) {
  GRID_LOOP(i, n) { store(dst, i, activate(y[i] + bias[i % width], act, coef)); }
}

// y = act(y + bias (+ skip)) in place, y NHWC with `channels` last.
template <typename T>
__device__ void conv_epilogue(T *y, const float *bias, const T *skip, long long n, int channels,
                              int act, float coef) {
  GRID_LOOP(i, n) {
    float s = load(y, i) + bias[i % channels];
    if (skip != nullptr) {
      s += load(skip, i);
    }
    store(y, i, activate(s, act, coef));
  }
}

#define PLAN_KERNELS(T, suffix)                                                                    \
  extern "C" __global__ void plan_widen_##suffix(const signed char *src, T *dst, long long rows,   \
                                                 int c, int hw) {                                  \
    widen(src, dst, rows, c, hw);                                                                  \
  }                                                                                                \
  extern "C" __global__ void plan_globals_##suffix(const float *src, T *dst, long long n) {        \
    globals(src, dst, n);                                                                          \
  }                                                                                                \
  extern "C" __global__ void plan_bias_act_##suffix(const float *y, const float *bias, T *dst,     \
                                                    long long n, int width, int act, float coef) { \
    bias_act(y, bias, dst, n, width, act, coef);                                                   \
  }                                                                                                \
  extern "C" __global__ void plan_conv_epilogue_##suffix(T *y, const float *bias, const T *skip,   \
                                                         long long n, int channels, int act,       \
                                                         float coef) {                             \
    conv_epilogue(y, bias, skip, n, channels, act, coef);                                          \
  }

PLAN_KERNELS(float, f32)
PLAN_KERNELS(bf16_bits, bf16)
