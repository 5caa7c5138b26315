"""A short tour of Ember (the main job until the Fashion-MNIST trainer lands)."""
import time

import ember

print(f"ember {ember.__version__}: {ember.get_num_threads()} threads, kernels for {ember._C._cpu_capability()}")

a = ember.arange(12, dtype=ember.float32).reshape(3, 4)
print("a =", a)
print("a.T is a view sharing storage:", a.T.data_ptr() == a.data_ptr(), "contiguous:", a.T.is_contiguous())
print("broadcast + type promotion: (a + ember.arange(4)).dtype =", (a + ember.arange(4)).dtype)
print("reductions: sum", a.sum().item(), " mean over dim 0", a.mean(0).tolist(),
      " max over dim 1", a.max(1).values.tolist())
print("matmul on OpenBLAS:", (a @ a.T).tolist())
print("basic indexing:", a[1:, ::2].tolist(), " masks:", a[a > 6].tolist())

ember.manual_seed(0)
x = ember.randn(1000, 1000)
start = time.perf_counter()
y = (x @ x).relu().sum()
print(f"1000x1000 matmul + relu + sum: {y.item():.2f} in {1e3 * (time.perf_counter() - start):.1f} ms")
