// The optimizers' steps over every parameter in one launch
// (src/optim/fused.rs), where candle's ops take eight (momentum) to
// fifteen (RMSProp) launches per parameter per step.
//
// table: six 64-bit words per tensor: its parameter, gradient and three
// state addresses (f32; momentum uses the first, AdamW two moments,
// RMSProp the square average, the gradient average when centered and the
// momentum buffer), and its length with bit 63 set on the state's first
// step (momentum's buffer becomes the gradient). Block (x, k) updates
// tensor k, grid-striding over its values.
//
// Twins: src/optim/fused.rs::momentum_element, adamw_element and
// rmsprop_element, the same
// operations in the same order, each rounded on its own (no fused
// multiply-add), which are also those of the CPU's in-place rules
// (src/optim/inplace.rs).

#include "bf16.cuh"

#define WORDS 6

struct Slot {
  float *p;
  const float *g;
  float *a;
  float *b;
  float *c;
  long long n;
  bool first;
};

__device__ __forceinline__ Slot slot(const unsigned long long *table) {
  const unsigned long long *e = table + WORDS * (long long)blockIdx.y;
  Slot s;
  s.p = (float *)e[0];
  s.g = (const float *)e[1];
  s.a = (float *)e[2];
  s.b = (float *)e[3];
  s.c = (float *)e[4];
  s.first = (e[5] >> 63) != 0;
  s.n = (long long)(e[5] & 0x7fffffffffffffffull);
  return s;
}

// x * k + 0, as candle's affine and the CPU rules compute it.
__device__ __forceinline__ float scaled(float x, float k) { return __fadd_rn(__fmul_rn(x, k), 0.0f); }

extern "C" __global__ void momentum_step_f32(const unsigned long long *table, float lr,
                                             float momentum, float blend_new, float weight_decay,
                                             int nesterov) {
  const Slot s = slot(table);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n;
       i += (long long)gridDim.x * blockDim.x) {
    const float pv = s.p[i];
    float gv = s.g[i];
    if (weight_decay != 0.0f) gv = __fadd_rn(gv, scaled(pv, weight_decay));
    const float b =
        s.first ? gv : __fadd_rn(scaled(s.a[i], momentum), scaled(gv, blend_new));
    const float step =
        nesterov ? scaled(__fadd_rn(gv, scaled(b, momentum)), lr) : scaled(b, lr);
    s.a[i] = b;
    s.p[i] = __fsub_rn(pv, step);
  }
}

extern "C" __global__ void adamw_step_f32(const unsigned long long *table, float lr, float beta1,
                                          float beta1_new, float beta2, float beta2_new,
                                          float scale_m, float scale_v, float eps, float decay) {
  const Slot s = slot(table);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n;
       i += (long long)gridDim.x * blockDim.x) {
    const float gv = s.g[i];
    const float m = __fadd_rn(scaled(s.a[i], beta1), scaled(gv, beta1_new));
    const float v = __fadd_rn(scaled(s.b[i], beta2), scaled(__fmul_rn(gv, gv), beta2_new));
    const float m_hat = scaled(m, scale_m);
    const float v_hat = scaled(v, scale_v);
    const float denom = __fadd_rn(__fmul_rn(__fsqrt_rn(v_hat), 1.0f), eps);
    const float step = scaled(__fdiv_rn(m_hat, denom), lr);
    s.a[i] = m;
    s.b[i] = v;
    s.p[i] = __fsub_rn(scaled(s.p[i], decay), step);
  }
}

// RMSProp as torch.optim.RMSprop: a = square average, b = gradient
// average (centered), c = momentum buffer (momentum > 0).
extern "C" __global__ void rmsprop_step_f32(const unsigned long long *table, float lr, float alpha,
                                            float alpha_new, float eps, float weight_decay,
                                            float momentum, int centered, int with_momentum) {
  const Slot s = slot(table);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < s.n;
       i += (long long)gridDim.x * blockDim.x) {
    const float pv = s.p[i];
    float gv = s.g[i];
    if (weight_decay != 0.0f) gv = __fadd_rn(gv, scaled(pv, weight_decay));
    const float sq = __fadd_rn(scaled(s.a[i], alpha), scaled(__fmul_rn(gv, gv), alpha_new));
    float avg;
    if (centered) {
      const float ga = __fadd_rn(s.b[i], scaled(__fsub_rn(gv, s.b[i]), alpha_new));
      s.b[i] = ga;
      avg = __fsqrt_rn(__fsub_rn(sq, __fmul_rn(ga, ga)));
    } else {
      avg = __fsqrt_rn(sq);
    }
    avg = __fadd_rn(__fmul_rn(avg, 1.0f), eps);
    float update;
    if (with_momentum) {
      const float buf = __fadd_rn(scaled(s.c[i], momentum), __fdiv_rn(gv, avg));
      s.c[i] = buf;
      update = scaled(buf, lr);
    } else {
      update = scaled(__fdiv_rn(gv, avg), lr);
    }
    s.a[i] = sq;
    s.p[i] = __fsub_rn(pv, update);
  }
}

// Mixed precision's bf16 compute copies refreshed from their f32 masters
// (src/train/mixed_precision.rs), every tensor in one launch. table: three
// 64-bit words per tensor: the master's address, the copy's and the
// length. The store rounds as the CPU's cast (half's bf16::from_f32).
extern "C" __global__ void refresh_bf16(const unsigned long long *table) {
  const unsigned long long *e = table + 3 * (long long)blockIdx.y;
  const float *master = (const float *)e[0];
  bf16_bits *copy = (bf16_bits *)e[1];
  const long long n = (long long)e[2];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    store(copy, i, master[i]);
  }
}
