#pragma once
// A plain struct shared with the CUDA launchers (kernels/cuda/launch.h), which nvcc compiles
// without the core's headers.
#include <cstdint>

namespace ember {

// One window geometry over up to 3 spatial dims, padded to 3 with leading unit dims (im2col,
// col2im, max pooling): input and output sizes, kernel, dilation, padding, stride.
struct WindowGeometry {
  int64_t in[3], out[3], k[3], d[3], p[3], s[3];
};

}  // namespace ember
