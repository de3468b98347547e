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

// The same sweep with the weights and the state in shared memory, where
// they fit (src/model/device_kernels/mdrnn_sweep.rs decides): the weights
// transposed so that a warp's threads (consecutive units a) read
// consecutive words, and only two diagonals of state (the previous one
// and the current one) instead of the whole board's in global memory
// (B*4*H*W*k floats: 6 GB at batch 16,384, 19x19, k = 64). Each point's
// output wo . u is taken as soon as its diagonal is done. Every sum runs
// in the order above, so the twin is the same.
extern "C" __global__ void mdrnn_sweep_shared_f32(const float *x, const float *weights, float *out,
                                                  int C, int H, int W, int k) {
  extern __shared__ float smem[];
  const int b = blockIdx.x;
  const int dir = blockIdx.y;
  const bool flip_w = (dir & 1) != 0;
  const bool flip_h = (dir & 2) != 0;
  const int HW = H * W;
  const int D = H < W ? H : W; // the longest diagonal
  float *wiT = smem;           // wiT[c * k + a] = wi[a * C + c]
  float *whT = wiT + k * C;    // whT[g * k + a] = wh[a * k + g]
  float *wb = whT + k * k;
  float *wo = wb + k;
  float *prev = wo + k; // the previous diagonal's state, [D][k]
  float *cur = prev + D * k;
  for (int t = threadIdx.x; t < k * C; t += blockDim.x) wiT[(t % C) * k + t / C] = weights[t];
  for (int t = threadIdx.x; t < k * k; t += blockDim.x)
    whT[(t % k) * k + t / k] = weights[k * C + t];
  for (int t = threadIdx.x; t < 2 * k; t += blockDim.x) wb[t] = weights[k * C + k * k + t];
  __syncthreads();
  const float *xb = x + (long long)b * C * HW;
  float *ob = out + ((long long)b * 4 + dir) * HW;
  for (int d = 0; d < H + W - 1; ++d) {
    const int lo = d > W - 1 ? d - (W - 1) : 0;
    const int hi = d < H - 1 ? d : H - 1;
    const int len = hi - lo + 1;
    const int plo = d - 1 > W - 1 ? d - 1 - (W - 1) : 0; // the previous diagonal's first row
    for (int t = threadIdx.x; t < len * k; t += blockDim.x) {
      const int vi = lo + t / k;
      const int a = t % k;
      const int vj = d - vi;
      const int i = flip_h ? H - 1 - vi : vi;
      const int j = flip_w ? W - 1 - vj : vj;
      float s = 0.0f;
      for (int c = 0; c < C; ++c) s += wiT[c * k + a] * xb[c * HW + i * W + j];
      const float *up = vi > 0 ? prev + (vi - 1 - plo) * k : wb;
      const float *left = vj > 0 ? prev + (vi - plo) * k : wb;
      for (int g = 0; g < k; ++g) s += whT[g * k + a] * (up[g] + left[g]);
      cur[(vi - lo) * k + a] = tanhf(s);
    }
    __syncthreads();
    for (int t = threadIdx.x; t < len; t += blockDim.x) {
      const int vi = lo + t;
      const int vj = d - vi;
      const int i = flip_h ? H - 1 - vi : vi;
      const int j = flip_w ? W - 1 - vj : vj;
      float s = 0.0f;
      for (int a = 0; a < k; ++a) s += wo[a] * cur[t * k + a];
      ob[i * W + j] = s;
    }
    __syncthreads();
    float *swap = prev;
    prev = cur;
    cur = swap;
  }
}
