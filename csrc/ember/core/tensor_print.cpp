// std::cout << tensor in libtorch's layout: a matrix per 2-d slice, every entry right-aligned to a
// width chosen from the magnitudes, a common power-of-ten factor for wide-ranging floats, then the
// footer "[ CPUFloatType{2,3} ]", so output compared against libtorch programs reads the same.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "ember/core/operators.h"

namespace ember {
namespace {

struct Format {
  enum class Style { Fixed, Scientific } style = Style::Fixed;
  int precision = 4;
  int width = 1;
  double scale = 1;
};

// Picks the layout from the finite values: integral values print without decimals, values spanning
// more than four orders of magnitude in scientific notation, large or small ones with a scale factor.
Format choose_format(const double* v, int64_t n, bool integral_dtype) {
  Format f;
  double max_abs = 0, min_abs = INFINITY;
  bool all_integers = true, any_finite = false, any_negative = false;
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] < 0) any_negative = true;
    if (!std::isfinite(v[i])) continue;
    any_finite = true;
    double a = std::fabs(v[i]);
    max_abs = std::max(max_abs, a);
    if (a != 0) min_abs = std::min(min_abs, a);
    if (std::nearbyint(v[i]) != v[i]) all_integers = false;
  }
  if (integral_dtype) {
    f.precision = 0;
    f.width = int(std::to_string(int64_t(max_abs)).size()) + (any_negative ? 1 : 0);
    return f;
  }
  if (!any_finite) return f;
  if (min_abs == INFINITY) min_abs = 1;
  int exp_max = max_abs == 0 ? 1 : int(std::floor(std::log10(max_abs))) + 1;
  int exp_min = int(std::floor(std::log10(min_abs))) + 1;
  if (all_integers) {
    if (exp_max > 9) {
      f.style = Format::Style::Scientific;
      f.width = 11;
    } else {
      f.precision = 0;
      f.width = exp_max + 1;
    }
  } else if (exp_max - exp_min > 4) {
    f.style = Format::Style::Scientific;
    f.width = (std::abs(exp_max) > 99 || std::abs(exp_min) > 99) ? 12 : 11;
  } else if (exp_max > 5 || exp_max < 0) {
    f.width = 7;
    f.scale = std::pow(10.0, exp_max - 1);
  } else {
    f.width = exp_max == 0 ? 7 : exp_max + 6;
  }
  return f;
}

void print_value(std::ostream& os, const Format& f, double x) {
  os << std::setw(f.width);
  if (f.style == Format::Style::Scientific) os << std::scientific << std::setprecision(f.precision) << x;
  else os << std::fixed << std::setprecision(f.precision) << x / f.scale;
}

// "0.001 *" above values printed divided by that factor
void print_scale(std::ostream& os, const Format& f, const std::string& indent) {
  if (f.scale != 1) os << indent << std::defaultfloat << std::setprecision(6) << f.scale << " *\n";
}

// One matrix (rows x cols), split into column blocks that fit 80 characters.
void print_matrix(std::ostream& os, const Format& f, const double* v, int64_t rows, int64_t cols) {
  int64_t per_line = std::max<int64_t>(1, 80 / (f.width + 1));
  for (int64_t c0 = 0; c0 < cols; c0 += per_line) {
    int64_t c1 = std::min(cols, c0 + per_line);
    if (cols > per_line) os << "\nColumns " << c0 + 1 << " to " << c1 << "\n";
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = c0; c < c1; ++c) {
        print_value(os, f, v[r * cols + c]);
        if (c + 1 < c1) os << " ";
      }
      os << "\n";
    }
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  if (t.is_meta()) {  // no values: the type and sizes only
    os << "[ Meta" << dtype_cname(t.dtype()) << "Type{";
    for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "," : "") << t.size(d);
    return os << "} ]";
  }
  std::ios saved(nullptr);
  saved.copyfmt(os);
  // a complex tensor shows its (real, imaginary) pairs as a trailing dim of 2; the footer keeps its type
  // (a conjugate or negative view shows its values)
  const Tensor d = t.has_math_bits() ? t.detach().resolve_neg().resolve_conj() : t.detach();
  const Tensor shown = is_complex(t.dtype()) ? ember::view_as_real(d) : d;
  Tensor values = shown.to(Device(), kDouble).contiguous();
  const double* v = values.data_ptr<double>();
  int64_t n = values.numel();
  Format f = choose_format(v, n, !is_floating(shown.dtype()));
  if (shown.dim() == 0) {
    os << std::defaultfloat << v[0] << "\n";
  } else if (n == 0) {
    os << "[ Tensor (empty) ]\n";  // no values to lay out; the footer still gives the shape
  } else if (shown.dim() == 1) {
    print_scale(os, f, "");
    for (int64_t i = 0; i < n; ++i) {
      print_value(os, f, v[i]);
      os << "\n";
    }
  } else {
    int64_t rows = shown.size(-2), cols = shown.size(-1), matrices = n / (rows * cols);
    if (shown.dim() == 2) print_scale(os, f, "");
    for (int64_t m = 0; m < matrices; ++m) {
      if (shown.dim() > 2) {
        // "(2,1,.,.) = ": the 1-based position of this matrix in the leading dims
        std::vector<int64_t> pos(shown.dim() - 2);
        for (int64_t d = shown.dim() - 3, rest = m; d >= 0; --d) {
          pos[d] = rest % shown.size(d) + 1;
          rest /= shown.size(d);
        }
        if (m > 0) os << "\n";
        os << "(";
        for (int64_t p : pos) os << p << ",";
        os << ".,.) = \n";
        print_scale(os, f, "");
      }
      print_matrix(os, f, v + m * rows * cols, rows, cols);
    }
  }
  os.copyfmt(saved);
  os << "[ " << (t.device().is_cpu() ? "CPU" : t.device().type == DeviceType::CUDA ? "CUDA" : "PrivateUse1")
     << dtype_cname(t.dtype()) << "Type{";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "," : "") << t.size(d);
  return os << "} ]";
}

}  // namespace ember
