// The MDRNN's four swiping units (src/model/mdrnn.rs) in one launch.
//
// Grid: (B, 4): one block per board and direction. Inside a block the
// anti-diagonals d = 0 .. H+W-2 are swept in order; the points of one
// diagonal depend only on the previous one, so the block's threads share a
// diagonal's (point, unit) pairs and synchronise between diagonals.
//
//   u(vi,vj)[a] = tanh(sum_c wi[a,c] x[c,i,j] + sum_g wh[a,g] (up[g] + left[g]))
//
// (vi, vj) are the direction's virtual coordinates (the board flipped
// left-right, top-bottom or both), (i, j) the real ones; up/left are the
// virtual predecessors, or wb outside the board. Output: per direction and
// point, wo . u, in out[b, dir, i*W + j]; the caller sums the four
// directions. `state` is scratch of B*4*H*W*k floats.
//
// Weights come packed as [wi (k*C) | wh (k*k) | wb (k) | wo (k)].
// Twin: src/model/device_kernels/mdrnn_sweep.rs::sweep_host.
extern "C" __global__ void mdrnn_sweep_f32(const float *x, const float *weights, float *state,
                                           float *out, int C, int H, int W, int k) {
  const int b = blockIdx.x;
  const int dir = blockIdx.y;
  const bool flip_w = (dir & 1) != 0;
  const bool flip_h = (dir & 2) != 0;
  const int HW = H * W;
  const float *wi = weights;
  const float *wh = wi + k * C;
  const float *wb = wh + k * k;
  const float *wo = wb + k;
  const float *xb = x + (long long)b * C * HW;
  float *u = state + ((long long)b * 4 + dir) * HW * k;  // virtual row-major
  for (int d = 0; d < H + W - 1; ++d) {
    const int lo = d > W - 1 ? d - (W - 1) : 0;
    const int hi = d < H - 1 ? d : H - 1;
    const int len = hi - lo + 1;
    for (int t = threadIdx.x; t < len * k; t += blockDim.x) {
      const int vi = lo + t / k;
      const int a = t % k;
      const int vj = d - vi;
      const int i = flip_h ? H - 1 - vi : vi;
      const int j = flip_w ? W - 1 - vj : vj;
      float s = 0.0f;
      for (int c = 0; c < C; ++c) s += wi[a * C + c] * xb[c * HW + i * W + j];
      const float *up = vi > 0 ? u + ((vi - 1) * W + vj) * k : wb;
      const float *left = vj > 0 ? u + (vi * W + vj - 1) * k : wb;
      for (int g = 0; g < k; ++g) s += wh[a * k + g] * (up[g] + left[g]);
      u[(vi * W + vj) * k + a] = tanhf(s);
    }
    __syncthreads();
  }
  float *ob = out + ((long long)b * 4 + dir) * HW;
  for (int p = threadIdx.x; p < HW; p += blockDim.x) {
    const int vi = p / W, vj = p % W;
    const int i = flip_h ? H - 1 - vi : vi;
    const int j = flip_w ? W - 1 - vj : vj;
    float s = 0.0f;
    for (int a = 0; a < k; ++a) s += wo[a] * u[p * k + a];
    ob[i * W + j] = s;
  }
}
