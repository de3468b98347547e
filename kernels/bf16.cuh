// bf16 storage as its bits, shared by the kernels that store f32 or bf16
// (plan_ops.cu, batch_norm.cu): loads widen exactly, stores round to
// nearest even as the CPU twins round (half's bf16::from_f32,
// Precision::store), so no toolkit header is needed.
#pragma once

typedef unsigned short bf16_bits;

__device__ __forceinline__ float load(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float load(const bf16_bits *p, long long i) {
  return __uint_as_float(((unsigned int)p[i]) << 16);
}
__device__ __forceinline__ void store(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void store(bf16_bits *p, long long i, float v) {
  unsigned int u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    p[i] = (bf16_bits)((u >> 16) | 0x40u); // a quiet NaN stays NaN
    return;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  p[i] = (bf16_bits)(u >> 16);
}
