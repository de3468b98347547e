// Batch normalisation in training mode (src/model/device_kernels/batch_norm.rs)
// over NCHW activations, with an optional ReLU, or a residual input and a
// ReLU: three launches forward (partial sums, statistics, normalise) and
// three backward (partial sums, their totals, input gradient; a residual
// block's end masks the gradient first), where candle's ops take about
// thirty.
//
// Twin: batch_norm.rs's host functions run these loops in this order. Every
// product and sum here is an explicit round-to-nearest intrinsic, so nvcc
// contracts nothing into a fused multiply-add, and the division and square
// root are IEEE's (no fast math): the twin gives the same bits.
//
// Reductions are deterministic: channel c's N = B*HW values are cut into G
// chunks; block (c, g) sums its chunk with THREADS threads (thread t takes
// elements t, t + THREADS, ...), then a tree over the threads; the chunks'
// partials are added in order by one thread per channel. Statistics use the
// channel's first value K as a shift (sums of x - K and (x - K)^2), so a
// large mean does not cancel the variance away.
//
// params: [mean (C) | biased var (C) | gamma (C) | beta (C)] in f32;
// grad params add [sum g*xhat (C) | sum g (C)], g = dy where the ReLU
// passes (or everywhere without it).

#define THREADS 256

#include "bf16.cuh"

// The offset of value i (0 <= i < B*HW) of channel c.
__device__ __forceinline__ long long at(long long i, int c, int C, int HW) {
  return (i / HW * C + c) * (long long)HW + i % HW;
}

// Block-wide tree sums of two values; the totals land in a[0] and b[0].
__device__ __forceinline__ void tree2(float *a, float *b) {
  const int t = threadIdx.x;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) {
      a[t] = __fadd_rn(a[t], a[t + s]);
      b[t] = __fadd_rn(b[t], b[t + s]);
    }
    __syncthreads();
  }
}

// Normalised value and pre-activation of x at channel c.
__device__ __forceinline__ float xhat_of(float x, const float *params, int c, int C, float eps) {
  const float invstd = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(params[C + c], eps)));
  return __fmul_rn(__fsub_rn(x, params[c]), invstd);
}
__device__ __forceinline__ float pre_of(float xhat, const float *params, int c, int C) {
  return __fadd_rn(__fmul_rn(params[2 * C + c], xhat), params[3 * C + c]);
}

template <typename T>
__device__ void stats_partial(const T *x, float *partial, int C, int HW, long long n, int G) {
  __shared__ float s1[THREADS], s2[THREADS];
  const int c = blockIdx.x, g = blockIdx.y, t = threadIdx.x;
  const long long chunk = (n + G - 1) / G;
  const long long lo = g * chunk, hi = min(n, lo + chunk);
  const float k = load(x, at(0, c, C, HW));
  float a = 0.0f, b = 0.0f;
  for (long long i = lo + t; i < hi; i += THREADS) {
    const float d = __fsub_rn(load(x, at(i, c, C, HW)), k);
    a = __fadd_rn(a, d);
    b = __fadd_rn(b, __fmul_rn(d, d));
  }
  s1[t] = a;
  s2[t] = b;
  tree2(s1, s2);
  if (t == 0) {
    partial[(c * (long long)G + g) * 2] = s1[0];
    partial[(c * (long long)G + g) * 2 + 1] = s2[0];
  }
}

template <typename T>
__device__ void stats_combine(const T *x, const float *partial, float *params, int C, int HW,
                              long long n, int G) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float a = 0.0f, b = 0.0f;
  for (int g = 0; g < G; ++g) {
    a = __fadd_rn(a, partial[(c * (long long)G + g) * 2]);
    b = __fadd_rn(b, partial[(c * (long long)G + g) * 2 + 1]);
  }
  const float nf = (float)n;
  const float shift = __fdiv_rn(a, nf);
  const float var = __fsub_rn(__fdiv_rn(b, nf), __fmul_rn(shift, shift));
  params[c] = __fadd_rn(load(x, at(0, c, C, HW)), shift);
  params[C + c] = fmaxf(var, 0.0f);
}

template <typename T>
__device__ void apply(const T *x, const float *params, T *y, int C, int HW, long long total,
                      float eps, int relu) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const int c = (int)(e / HW % C);
    const float pre = pre_of(xhat_of(load(x, e), params, c, C, eps), params, c, C);
    store(y, e, relu && !(pre > 0.0f) ? 0.0f : pre);
  }
}

template <typename T>
__device__ void grad_partial(const T *x, const T *dy, const float *params, float *partial, int C,
                             int HW, long long n, int G, float eps, int relu) {
  __shared__ float s1[THREADS], s2[THREADS];
  const int c = blockIdx.x, g = blockIdx.y, t = threadIdx.x;
  const long long chunk = (n + G - 1) / G;
  const long long lo = g * chunk, hi = min(n, lo + chunk);
  float a = 0.0f, b = 0.0f;
  for (long long i = lo + t; i < hi; i += THREADS) {
    const long long e = at(i, c, C, HW);
    const float xhat = xhat_of(load(x, e), params, c, C, eps);
    const float gv = relu && !(pre_of(xhat, params, c, C) > 0.0f) ? 0.0f : load(dy, e);
    a = __fadd_rn(a, __fmul_rn(gv, xhat));
    b = __fadd_rn(b, gv);
  }
  s1[t] = a;
  s2[t] = b;
  tree2(s1, s2);
  if (t == 0) {
    partial[(c * (long long)G + g) * 2] = s1[0];
    partial[(c * (long long)G + g) * 2 + 1] = s2[0];
  }
}

__device__ void grad_combine(const float *partial, float *sums, int C, int G) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float a = 0.0f, b = 0.0f;
  for (int g = 0; g < G; ++g) {
    a = __fadd_rn(a, partial[(c * (long long)G + g) * 2]);
    b = __fadd_rn(b, partial[(c * (long long)G + g) * 2 + 1]);
  }
  sums[c] = a;
  sums[C + c] = b;
}

// dx = gamma * invstd / N * (N g - sum g - xhat sum(g xhat)).
template <typename T>
__device__ void grad_input(const T *x, const T *dy, const float *params, const float *sums, T *dx,
                           int C, int HW, long long total, long long n, float eps, int relu) {
  const float nf = (float)n;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const int c = (int)(e / HW % C);
    const float xhat = xhat_of(load(x, e), params, c, C, eps);
    const float gv = relu && !(pre_of(xhat, params, c, C) > 0.0f) ? 0.0f : load(dy, e);
    const float invstd = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(params[C + c], eps)));
    const float scale = __fdiv_rn(__fmul_rn(params[2 * C + c], invstd), nf);
    const float inner =
        __fsub_rn(__fsub_rn(__fmul_rn(nf, gv), sums[C + c]), __fmul_rn(xhat, sums[c]));
    store(dx, e, __fmul_rn(scale, inner));
  }
}

// The residual block's end: relu(gamma xhat + beta + skip).
template <typename T>
__device__ void apply_skip(const T *x, const float *params, const T *skip, T *y, int C, int HW,
                           long long total, float eps) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const int c = (int)(e / HW % C);
    const float pre =
        __fadd_rn(pre_of(xhat_of(load(x, e), params, c, C, eps), params, c, C), load(skip, e));
    store(y, e, pre > 0.0f ? pre : 0.0f);
  }
}

// g = dy where the ReLU's output y passed.
template <typename T>
__device__ void relu_mask(const T *dy, const T *y, T *g, long long total) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    store(g, e, load(y, e) > 0.0f ? load(dy, e) : 0.0f);
  }
}

extern "C" __global__ void bn_grad_combine(const float *partial, float *sums, int C, int G) {
  grad_combine(partial, sums, C, G);
}

#define BN_KERNELS(T, suffix)                                                                      \
  extern "C" __global__ void bn_stats_partial_##suffix(const T *x, float *partial, int C, int HW,  \
                                                       long long n, int G) {                       \
    stats_partial(x, partial, C, HW, n, G);                                                        \
  }                                                                                                \
  extern "C" __global__ void bn_stats_combine_##suffix(const T *x, const float *partial,            \
                                                       float *params, int C, int HW, long long n,  \
                                                       int G) {                                    \
    stats_combine(x, partial, params, C, HW, n, G);                                                \
  }                                                                                                \
  extern "C" __global__ void bn_apply_##suffix(const T *x, const float *params, T *y, int C,       \
                                               int HW, long long total, float eps, int relu) {     \
    apply(x, params, y, C, HW, total, eps, relu);                                                  \
  }                                                                                                \
  extern "C" __global__ void bn_grad_partial_##suffix(const T *x, const T *dy,                     \
                                                      const float *params, float *partial, int C,  \
                                                      int HW, long long n, int G, float eps,       \
                                                      int relu) {                                  \
    grad_partial(x, dy, params, partial, C, HW, n, G, eps, relu);                                  \
  }                                                                                                \
  extern "C" __global__ void bn_grad_input_##suffix(const T *x, const T *dy, const float *params,  \
                                                    const float *sums, T *dx, int C, int HW,       \
                                                    long long total, long long n, float eps,       \
                                                    int relu) {                                    \
    grad_input(x, dy, params, sums, dx, C, HW, total, n, eps, relu);                               \
  }                                                                                                \
  extern "C" __global__ void bn_apply_skip_##suffix(const T *x, const float *params, const T *skip, \
                                                    T *y, int C, int HW, long long total,          \
                                                    float eps) {                                   \
    apply_skip(x, params, skip, y, C, HW, total, eps);                                             \
  }                                                                                                \
  extern "C" __global__ void bn_relu_mask_##suffix(const T *dy, const T *y, T *g,                  \
                                                   long long total) {                              \
    relu_mask(dy, y, g, total);                                                                    \
  }

BN_KERNELS(float, f32)
BN_KERNELS(bf16_bits, bf16)
