#pragma once
// A tensor that a factory or a copy has just made starts at version 0, as PyTorch's, whatever
// in-place write (fill_, copy_) filled it.
#include "ember/core/tensor.h"

namespace ember {

inline Tensor fresh(Tensor t) {
  t.impl()->set_version_counter(intrusive_ptr<VersionCounter>());
  return t;
}

}  // namespace ember
