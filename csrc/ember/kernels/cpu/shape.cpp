// CPU kernels of the shape ops that write generated indices (kernels/shape.h): repeat_interleave's
// index list, tril/triu_indices, and combinations' index tuples.
#include <algorithm>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/kernels/shape.h"

namespace ember {
namespace {

Tensor repeat_interleave_cpu(const Tensor& repeats, std::optional<int64_t> output_size) {
  const int64_t* r = static_cast<const int64_t*>(repeats.data_ptr());
  const int64_t n = repeats.numel();
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    EMBER_CHECK(r[i] >= 0, "repeats can not be negative");
    EMBER_CHECK(!add_overflows(total, r[i], &total), "repeat_interleave: the output size (the sum of repeats) overflowed");
  }
  EMBER_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  Tensor out = empty_tensor({total}, kLong);
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < r[i]; j++) *o++ = i;
  return out;
}

void tri_indices_cpu(const Tensor& out, int64_t row, int64_t col, int64_t offset, bool lower) {
  const int64_t n = out.sizes()[1];
  auto clamp_col = [col](__int128 v) { return v < 0 ? __int128(0) : v > col ? __int128(col) : v; };
  auto begin = [&](int64_t i) { return lower ? __int128(0) : clamp_col(__int128(i) + offset); };
  auto end = [&](int64_t i) { return lower ? clamp_col(__int128(i) + offset + 1) : __int128(col); };
  int64_t* p = static_cast<int64_t*>(out.data_ptr());
  int64_t k = 0;
  // rows with no entries are skipped: they lie before (lower) or after (upper) the band
  int64_t i0 = lower ? int64_t(std::min<__int128>(row, std::max<__int128>(0, -__int128(offset)))) : 0;
  for (int64_t i = i0; i < row && k < n; i++)
    for (int64_t j = int64_t(begin(i)), j1 = int64_t(end(i)); j < j1; j++, k++) {
      p[k] = i;
      p[n + k] = j;
    }
}

void combinations_cpu(const Tensor& out, int64_t n, int64_t r, bool with_replacement) {
  int64_t* flat = static_cast<int64_t*>(out.data_ptr());
  std::vector<int64_t> cur(size_t(r), 0);
  if (!with_replacement)
    for (int64_t i = 0; i < r; i++) cur[size_t(i)] = i;
  while (true) {
    flat = std::copy(cur.begin(), cur.end(), flat);
    int64_t i = r - 1;
    while (i >= 0 && cur[size_t(i)] == (with_replacement ? n - 1 : n - r + i)) i--;
    if (i < 0) break;
    cur[size_t(i)]++;
    for (int64_t j = i + 1; j < r; j++) cur[size_t(j)] = with_replacement ? cur[size_t(i)] : cur[size_t(j - 1)] + 1;
  }
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(repeat_interleave_stub, CPU, &ember::repeat_interleave_cpu);
EMBER_REGISTER_KERNEL(tri_indices_stub, CPU, &ember::tri_indices_cpu);
EMBER_REGISTER_KERNEL(combinations_stub, CPU, &ember::combinations_cpu);
