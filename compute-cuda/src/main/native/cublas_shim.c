/*
 * JNI shim from io.shardtrain.compute.cuda.CublasShim to cuBLAS, opened with dlopen so that no
 * CUDA header or link-time library is needed and any libcublas.so.N with the v2 API will do.
 * Handles, streams and device pointers cross as jlong. Build (scripts/gpu-check.sh does it):
 *   gcc -shared -fPIC -O2 -I$JAVA_HOME/include -I$JAVA_HOME/include/linux \
 *       -o libshardtrain_cublas.so cublas_shim.c -ldl
 */
#include <jni.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>

typedef int (*create_fn)(void **handle);
typedef int (*destroy_fn)(void *handle);
typedef int (*set_stream_fn)(void *handle, void *stream);
typedef int (*sgemm_fn)(void *handle, int transa, int transb, int m, int n, int k,
                        const float *alpha, const float *a, int lda, const float *b, int ldb,
                        const float *beta, float *c, int ldc);

static create_fn p_create;
static destroy_fn p_destroy;
static set_stream_fn p_set_stream;
static sgemm_fn p_sgemm;

#define FN(name) Java_io_shardtrain_compute_cuda_CublasShim_##name

JNIEXPORT jstring JNICALL FN(nativeOpen)(JNIEnv *env, jclass cls, jstring jlib) {
  const char *lib = (*env)->GetStringUTFChars(env, jlib, NULL);
  char msg[512];
  void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  if (h == NULL) {
    snprintf(msg, sizeof msg, "dlopen(%s): %s", lib, dlerror());
    (*env)->ReleaseStringUTFChars(env, jlib, lib);
    return (*env)->NewStringUTF(env, msg);
  }
  p_create = (create_fn)dlsym(h, "cublasCreate_v2");
  p_destroy = (destroy_fn)dlsym(h, "cublasDestroy_v2");
  p_set_stream = (set_stream_fn)dlsym(h, "cublasSetStream_v2");
  p_sgemm = (sgemm_fn)dlsym(h, "cublasSgemm_v2");
  if (!p_create || !p_destroy || !p_set_stream || !p_sgemm) {
    snprintf(msg, sizeof msg, "%s lacks the cuBLAS v2 entry points", lib);
    (*env)->ReleaseStringUTFChars(env, jlib, lib);
    return (*env)->NewStringUTF(env, msg);
  }
  (*env)->ReleaseStringUTFChars(env, jlib, lib);
  return NULL;
}

JNIEXPORT jint JNICALL FN(nativeCreate)(JNIEnv *env, jclass cls, jlongArray out) {
  void *h = NULL;
  int status = p_create(&h);
  jlong v = (jlong)(intptr_t)h;
  (*env)->SetLongArrayRegion(env, out, 0, 1, &v);
  return status;
}

JNIEXPORT jint JNICALL FN(nativeSetStream)(JNIEnv *env, jclass cls, jlong h, jlong stream) {
  return p_set_stream((void *)(intptr_t)h, (void *)(intptr_t)stream);
}

JNIEXPORT jint JNICALL FN(nativeSgemm)(JNIEnv *env, jclass cls, jlong h, jint opa, jint opb,
    jint m, jint n, jint k, jfloat alpha, jlong a, jint lda, jlong b, jint ldb, jfloat beta,
    jlong c, jint ldc) {
  float al = alpha, be = beta;
  return p_sgemm((void *)(intptr_t)h, opa, opb, m, n, k, &al, (const float *)(intptr_t)a, lda,
                 (const float *)(intptr_t)b, ldb, &be, (float *)(intptr_t)c, ldc);
}

JNIEXPORT jint JNICALL FN(nativeDestroy)(JNIEnv *env, jclass cls, jlong h) {
  return p_destroy((void *)(intptr_t)h);
}
