"""float16 / bfloat16 on the CPU, Ember vs PyTorch in one process: casts, elementwise ops,
reductions and the NN ops AMP-on-CPU and DDP's fp16/bf16 compression hooks lean on.

    PYTHONPATH=python python3 benchmarks/bench_reduced_float.py [--threads N] [--n N]

Interleaved rounds, medians. "torch/ember" > 1 means Ember is faster.
"""
import argparse

from common import compare, libraries, print_table


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n", type=int, default=700_000, help="elements of the 1-d cases (DDP's bucket: 700k)")
    p.add_argument("--filter", default="", help="only cases whose name contains this")
    args = p.parse_args()
    libs = libraries(args.threads)
    n = args.n

    def data(lib, dt):
        lib.manual_seed(0)
        x = lib.randn(n)
        y = lib.rand(n) + 0.5
        m = lib.randn(256, 512)
        return {"f32": x, "x": x.to(dt), "y": y.to(dt), "m": m.to(dt), "mt": m.to(dt).t(),
                "w": lib.randn(512, 512).to(dt)}

    cases = []
    for dt in ("float16", "bfloat16"):
        d = {k: data(lib, getattr(lib, dt)) for k, lib in libs.items()}
        dtype = {k: getattr(lib, dt) for k, lib in libs.items()}
        f32 = {k: lib.float32 for k, lib in libs.items()}

        def case(name, make):
            if args.filter in f"{name} {dt}":
                cases.append((f"{name} {dt}", {k: make(k, v) for k, v in d.items()}))

        case("to(dtype) from f32", lambda k, v: (lambda: v["f32"].to(dtype[k])))
        case("to(float32)", lambda k, v: (lambda: v["x"].to(f32[k])))
        case("add", lambda k, v: (lambda: v["x"] + v["y"]))
        case("mul_ (in place)", lambda k, v: (lambda: v["x"].mul_(v["y"]).div_(v["y"])))
        case("div_ by scalar", lambda k, v: (lambda: v["x"].div_(2.0).mul_(2.0)))
        case("add scalar", lambda k, v: (lambda: v["x"] + 1.5))
        case("exp", lambda k, v: (lambda: v["x"].exp()))
        case("relu", lambda k, v: (lambda: v["x"].relu()))
        case("sigmoid", lambda k, v: (lambda: v["x"].sigmoid()))
        case("gt (bool result)", lambda k, v: (lambda: v["x"] > v["y"]))
        case("where", lambda k, v: (lambda: v["x"].where(v["x"] > 0, v["y"])))
        case("clamp", lambda k, v: (lambda: v["x"].clamp(-1, 1)))
        case("sum", lambda k, v: (lambda: v["x"].sum()))
        case("sum(dim=1) 256x512", lambda k, v: (lambda: v["m"].sum(1)))
        case("add transposed 512x256", lambda k, v: (lambda: v["mt"] + v["mt"]))
        case("softmax 256x512", lambda k, v, libs=libs: (lambda: libs[k].softmax(v["m"], 1)))
        case("matmul 256x512x512", lambda k, v: (lambda: v["m"] @ v["w"]))
    rows = compare(cases, rounds=7, min_time=0.05)
    print_table(f"float16 / bfloat16 on the CPU, n={n}, {args.threads} thread(s) (median)", rows)


if __name__ == "__main__":
    main()
