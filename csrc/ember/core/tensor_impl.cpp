#include "ember/core/tensor_impl.h"

#include "ember/core/checked_math.h"

#include <unistd.h>

namespace ember {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), dtype_(dtype) {
  on_device_flags();
  set_sizes_and_strides(sizes, strides, storage_offset);
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::no_data() const {
  if (on_meta_ && layout_ == Layout::Strided)
    EMBER_FAIL(NotImplemented, "Cannot access the data of a tensor on the meta device: meta tensors have sizes, "
               "strides and a dtype but no data (this operation reads or writes elements)");
  EMBER_FAIL(Runtime, "Cannot access data pointer of Tensor that doesn't have storage (a sparse COO tensor: "
             "use ._values() / ._indices(), or .to_dense())");
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_.assign(sizes);
  strides_.assign(strides);
  storage_offset_ = storage_offset;
  numel_ = checked_numel(sizes);  // a view's sizes can come from anywhere (expand, as_strided, view)
  is_contiguous_ = compute_is_contiguous(sizes, strides);
}

void throw_numel_overflow() { EMBER_FAIL(Runtime, "numel: integer multiplication overflow"); }

DimVector contiguous_strides(IntArrayRef sizes) { return checked_contiguous_strides(sizes); }

DimVector checked_contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size());
  int64_t s = 1;
  bool overflow = false;
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; i--) {
    st[i] = s;
    overflow |= mul_overflows(s, std::max<int64_t>(sizes[i], 1), &s);
  }
  EMBER_CHECK(!overflow, "Stride calculation overflowed");
  return st;
}

static int64_t physical_memory_bytes() {
  static const int64_t phys = int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE));
  return phys;
}

void check_output_size(IntArrayRef sizes, int64_t itemsize, const char* op) {
  int64_t n, nbytes;
  EMBER_CHECK(!numel_overflows(sizes, &n) && !mul_overflows(n, itemsize, &nbytes), op,
              ": Storage size calculation overflowed with sizes=", sizes);
  EMBER_CHECK(nbytes <= physical_memory_bytes(), op, ": not enough memory: the output of size ", sizes, " needs ",
              nbytes, " bytes, more than this machine's memory (", physical_memory_bytes(), " bytes)");
}

void check_view_count(int64_t count, const char* op) {
  // a view costs its TensorImpl, sizes/strides and, from Python, the wrapper object: ~512 bytes
  constexpr int64_t kViewBytes = 512;
  EMBER_CHECK(count <= physical_memory_bytes() / kViewBytes, op, ": ", count, " output tensors would need ", count / (int64_t(1) << 20),
              " MiB of tensor headers (at ", kViewBytes, " bytes each), more than this machine's memory");
}

int64_t storage_nbytes(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, int64_t itemsize) {
  int64_t extent = 1;  // elements from the offset to the last one addressed, inclusive
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == 0) return 0;
    int64_t span;
    overflow |= mul_overflows(sizes[i] - 1, strides[i], &span);
    overflow |= add_overflows(extent, span, &extent);
  }
  int64_t bytes;
  overflow |= add_overflows(extent, storage_offset, &extent);
  overflow |= mul_overflows(extent, itemsize, &bytes);
  if (overflow) {
    if (sizes.size() == strides.size() && !strides.empty())
      EMBER_FAIL(Runtime, "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
    EMBER_FAIL(Runtime, "Storage size calculation overflowed with sizes=", sizes);
  }
  return bytes;
}

bool compute_is_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  for (int64_t s : sizes)
    if (s == 0) return true;  // an empty tensor is contiguous whatever its strides
  int64_t expected = 1;
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; i--) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

}  // namespace ember
