// SGD with momentum (Nesterov or not) over every parameter in one launch
// (src/optim/fused.rs), where candle's ops take about eight launches per
// parameter per step.
//
// table: four 64-bit words per tensor: its parameter, gradient and
// momentum-buffer addresses (f32), and its length with bit 63 set on the
// buffer's first step (the buffer becomes the gradient). Block (x, k)
// updates tensor k, grid-striding over its values.
//
// Twin: src/optim/fused.rs::momentum_element, the same operations in the
// same order, each rounded on its own (no fused multiply-add), which are
// also those of the CPU's in-place rules (src/optim/inplace.rs).

extern "C" __global__ void momentum_step_f32(const unsigned long long *table, float lr,
                                             float momentum, float blend_new, float weight_decay,
                                             int nesterov) {
  const unsigned long long *e = table + 4 * (long long)blockIdx.y;
  float *p = (float *)e[0];
  const float *g = (const float *)e[1];
  float *buf = (float *)e[2];
  const bool first = (e[3] >> 63) != 0;
  const long long n = (long long)(e[3] & 0x7fffffffffffffffull);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float pv = p[i];
    float gv = g[i];
    if (weight_decay != 0.0f) gv = __fadd_rn(gv, __fadd_rn(__fmul_rn(pv, weight_decay), 0.0f));
    const float b = first ? gv
                          : __fadd_rn(__fadd_rn(__fmul_rn(buf[i], momentum), 0.0f),
                                      __fadd_rn(__fmul_rn(gv, blend_new), 0.0f));
    const float step =
        nesterov ? __fadd_rn(__fmul_rn(__fadd_rn(gv, __fadd_rn(__fmul_rn(b, momentum), 0.0f)), lr),
                             0.0f)
                 : __fadd_rn(__fmul_rn(b, lr), 0.0f);
    buf[i] = b;
    p[i] = __fsub_rn(pv, step);
  }
}
