// ShardTrain CUDA kernels: every Backend operation that is not a GEMM, the optimizer updates,
// and a tiled SGEMM used when the cuBLAS shim cannot load. Compiled to PTX at build time
// (compute-cuda/pom.xml) and loaded with cuModuleLoadData; all entry points are extern "C" so
// their names in the PTX are the plain names CudaKernels looks up. Matrices are row-major.

#define GRID_STRIDE(i, n) \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (long long)blockDim.x * gridDim.x)

extern "C" {

__global__ void st_axpy(int n, float alpha, const float* x, float* y) {
  GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

__global__ void st_scale(int n, float alpha, float* x) {
  GRID_STRIDE(i, n) x[i] *= alpha;
}

__global__ void st_add(int n, const float* a, const float* b, float* out) {
  GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

__global__ void st_mul(int n, const float* a, const float* b, float* out) {
  GRID_STRIDE(i, n) out[i] = a[i] * b[i];
}

__global__ void st_add_row_vector(int rows, int cols, float* m, const float* v) {
  long long n = (long long)rows * cols;
  GRID_STRIDE(i, n) m[i] += v[i % cols];
}

// One thread per column, walking down the rows: neighbouring threads read neighbouring words.
__global__ void st_column_sums(int rows, int cols, const float* m, float* out) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.f;
  for (int r = 0; r < rows; r++) s += m[(long long)r * cols + c];
  out[c] = s;
}

// One warp per row: lanes stride the columns, then a shuffle reduction.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

#define WARP_ROW \
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; \
  int lane = threadIdx.x & 31; \
  if (row >= rows) return; \
  const float* mr = m + (long long)row * cols;

__global__ void st_row_sums(int rows, int cols, const float* m, float* out) {
  WARP_ROW
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += mr[c];
  s = warp_sum(s);
  if (lane == 0) out[row] = s;
}

__global__ void st_row_max(int rows, int cols, const float* m, float* out) {
  WARP_ROW
  float b = -INFINITY;
  for (int c = lane; c < cols; c += 32) b = fmaxf(b, mr[c]);
  b = warp_max(b);
  if (lane == 0) out[row] = b;
}

// First index on ties, as on the CPU: each lane keeps its first best, then the reduction
// prefers the larger value and, on equal values, the smaller index.
__global__ void st_row_argmax(int rows, int cols, const float* m, int* out) {
  WARP_ROW
  float b = -INFINITY;
  int bi = cols;
  for (int c = lane; c < cols; c += 32) {
    float v = mr[c];
    if (bi == cols || v > b) { b = v; bi = c; }
  }
  for (int o = 16; o > 0; o >>= 1) {
    float ob = __shfl_xor_sync(0xffffffffu, b, o);
    int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (oi < cols && (bi == cols || ob > b || (ob == b && oi < bi))) { b = ob; bi = oi; }
  }
  if (lane == 0) out[row] = bi;
}

__global__ void st_relu(int n, const float* x, float* out) {
  GRID_STRIDE(i, n) out[i] = fmaxf(x[i], 0.f);
}

__global__ void st_relu_backward(int n, const float* x, const float* g, float* gi) {
  GRID_STRIDE(i, n) gi[i] = x[i] > 0.f ? g[i] : 0.f;
}

__global__ void st_tanh(int n, const float* x, float* out) {
  GRID_STRIDE(i, n) out[i] = tanhf(x[i]);
}

__global__ void st_tanh_backward(int n, const float* y, const float* g, float* gi) {
  GRID_STRIDE(i, n) gi[i] = g[i] * (1.f - y[i] * y[i]);
}

__device__ __forceinline__ float sigmoidf(float x) {
  // Two branches keep exp's argument negative, so neither side overflows.
  if (x >= 0.f) return 1.f / (1.f + expf(-x));
  float e = expf(x);
  return e / (1.f + e);
}

__global__ void st_sigmoid(int n, const float* x, float* out) {
  GRID_STRIDE(i, n) out[i] = sigmoidf(x[i]);
}

__global__ void st_sigmoid_backward(int n, const float* y, const float* g, float* gi) {
  GRID_STRIDE(i, n) gi[i] = g[i] * y[i] * (1.f - y[i]);
}

// One warp per row. rowLoss[r] = logsumexp(z_r) - z_r[y_r]; probs and grad may be null.
__global__ void st_softmax_xent(int rows, int cols, const float* m, const int* labels,
                                float* probs, float* grad, float* rowLoss) {
  WARP_ROW
  float mx = -INFINITY;
  for (int c = lane; c < cols; c += 32) mx = fmaxf(mx, mr[c]);
  mx = warp_max(mx);
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(mr[c] - mx);
  s = warp_sum(s);
  float logSum = logf(s);
  int y = labels[row];
  if (lane == 0) rowLoss[row] = logSum - (mr[y] - mx);
  if (probs != nullptr || grad != nullptr) {
    float invRows = 1.f / rows;
    long long off = (long long)row * cols;
    for (int c = lane; c < cols; c += 32) {
      float p = expf(mr[c] - mx - logSum);
      if (probs != nullptr) probs[off + c] = p;
      if (grad != nullptr) grad[off + c] = (p - (c == y ? 1.f : 0.f)) * invRows;
    }
  }
}

__global__ void st_logistic_loss(int n, const float* z, const float* labels, float* probs,
                                 float* grad, float* loss) {
  GRID_STRIDE(i, n) {
    float x = z[i], y = labels[i];
    loss[i] = log1pf(expf(-fabsf(x))) + fmaxf(x, 0.f) - x * y;
    float p = sigmoidf(x);
    if (probs != nullptr) probs[i] = p;
    if (grad != nullptr) grad[i] = (p - y) / n;
  }
}

// out[0] = scale * sum(in): one block of 1024 threads (losses are a few thousand values).
__global__ void st_sum(int n, const float* in, float scale, float* out) {
  __shared__ float part[32];
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += in[i];
  s = warp_sum(s);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.f;
    s = warp_sum(s);
    if (threadIdx.x == 0) out[0] = s * scale;
  }
}

__global__ void st_gather(int nIds, int dim, const float* table, const int* ids, float* out) {
  long long n = (long long)nIds * dim;
  GRID_STRIDE(i, n) out[i] = table[(long long)ids[i / dim] * dim + i % dim];
}

__global__ void st_scatter_add(int nIds, int dim, const float* grad, const int* ids, float* table) {
  long long n = (long long)nIds * dim;
  GRID_STRIDE(i, n) atomicAdd(&table[(long long)ids[i / dim] * dim + i % dim], grad[i]);
}

// Optimizer updates, element for element the CPU optimizers' arithmetic (optim/*.java).
__global__ void st_sgd(int n, float lr, float wd, float* w, const float* g) {
  GRID_STRIDE(i, n) w[i] -= lr * (g[i] + wd * w[i]);
}

__global__ void st_momentum(int n, float lr, float mu, float wd, int nesterov, float* w,
                            const float* g, float* v) {
  GRID_STRIDE(i, n) {
    float wi = w[i];
    float gi = g[i] + wd * wi;
    float vi = mu * v[i] + gi;
    v[i] = vi;
    w[i] = wi - lr * (nesterov ? gi + mu * vi : vi);
  }
}

__global__ void st_adam(int n, float stepSize, float b1, float b2, float eps, float sqrtCorr2,
                        float l2, float shrink, float* w, const float* g, float* m, float* v) {
  GRID_STRIDE(i, n) {
    float wi = w[i] * shrink;
    float gi = g[i] + l2 * w[i];
    float mi = b1 * m[i] + (1.f - b1) * gi;
    float vi = b2 * v[i] + (1.f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] = wi - stepSize * mi / (sqrtf(vi) / sqrtCorr2 + eps);
  }
}

// Fallback SGEMM, C = alpha op(A) op(B) + beta C, row-major. 64x64 tile per block of 256
// threads, each thread a 4x4 sub-tile; k in steps of 16 through shared memory. beta == 0 never
// reads C (BLAS convention: stale NaNs must not survive).
#define BM 64
#define BN 64
#define BK 16
__global__ void __launch_bounds__(256) st_sgemm(int transA, int transB, int M, int N, int K,
    float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int l = threadIdx.x; l < BM * BK; l += 256) {
      int r = l / BK, kk = l % BK;  // A tile element (row r of op(A), column kk)
      int gr = row0 + r, gk = k0 + kk;
      float va = 0.f;
      if (gr < M && gk < K) va = transA ? A[(long long)gk * lda + gr] : A[(long long)gr * lda + gk];
      As[kk][r] = va;
      int kk2 = l / BN, c = l % BN;  // B tile element (row kk2 of op(B), column c)
      int gk2 = k0 + kk2, gc = col0 + c;
      float vb = 0.f;
      if (gk2 < K && gc < N) vb = transB ? B[(long long)gc * ldb + gk2] : B[(long long)gk2 * ldb + gc];
      Bs[kk2][c] = vb;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    int r = row0 + ty + 16 * i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; j++) {
      int c = col0 + tx + 16 * j;
      if (c >= N) continue;
      float* p = C + (long long)r * ldc + c;
      *p = beta == 0.f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *p;
    }
  }
}

}  // extern "C"
