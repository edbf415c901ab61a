// ATTNBENCH_HD marks small inline functions usable from both host C++ and CUDA device code.
#pragma once

#if defined(__CUDACC__)
#define ATTNBENCH_HD __host__ __device__ __forceinline__
#else
#define ATTNBENCH_HD inline
#endif
