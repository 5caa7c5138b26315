"""Sorting and selection (radix sort of order-preserving keys, topk by selection) and pow by a number,
Ember vs PyTorch in one process, interleaved rounds, medians.

    PYTHONPATH=python python3 benchmarks/bench_sort.py [--threads N]
"""
from common import compare, print_table, threads_and_libraries


def main():
    args, libs = threads_and_libraries()

    def data(lib):
        lib.manual_seed(0)
        return {"i64": lib.randint(0, 100_000, (32768,)), "f32": lib.randn(32768), "rows": lib.randn(64, 1024),
                "act": lib.randn(4096, 64)}
    d = {name: data(lib) for name, lib in libs.items()}

    def case(label, fn):
        return (label, {name: (lambda lib=lib, x=d[name]: fn(lib, x)) for name, lib in libs.items()})
    cases = [
        case("sort 32768 int64 (stable)", lambda lib, x: lib.sort(x["i64"], stable=True)),
        case("sort 32768 float32", lambda lib, x: lib.sort(x["f32"])),
        case("sort 64x1024 float32 rows", lambda lib, x: lib.sort(x["rows"], dim=1)),
        case("topk 1024 of 32768 float32", lambda lib, x: lib.topk(x["f32"], 1024)),
        case("topk 5 of 64x1024 rows", lambda lib, x: lib.topk(x["rows"], 5, dim=1)),
        case("unique 32768 int64, inverse", lambda lib, x: lib.unique(x["i64"], return_inverse=True)),
        case("x ** 2, 4096x64 float32", lambda lib, x: x["act"] ** 2),
        case("x ** 0.5 of |x|, 4096x64", lambda lib, x: x["act"].abs() ** 0.5),
        case("x ** 2.5 of |x|, 4096x64", lambda lib, x: x["act"].abs() ** 2.5),
    ]
    print_table(f"Sorting, selection and pow, {args.threads} thread(s)", compare(cases))


if __name__ == "__main__":
    main()
