"""Fourier transforms and complex elementwise math, Ember (pocketfft) vs PyTorch (its CPU build's FFT) in
one process, interleaved rounds, medians.

    PYTHONPATH=python python3 benchmarks/bench_fft.py [--threads N]
"""
from common import compare, print_table, threads_and_libraries


def main():
    args, libs = threads_and_libraries()

    def data(lib, shape, complex_):
        lib.manual_seed(0)
        return lib.randn(*shape, dtype=lib.complex64 if complex_ else lib.float32)

    inputs = {name: {
        "r1k": data(lib, (64, 1024), False), "r4k": data(lib, (16, 4096), False),
        "c1k": data(lib, (64, 1024), True), "c2d": data(lib, (256, 256), True),
        "rodd": data(lib, (64, 1000), False), "cbig": data(lib, (1 << 20,), True),
        "stft": data(lib, (4, 16000), False),
    } for name, lib in libs.items()}

    def case(label, fn):
        return (label, {name: (lambda lib=lib, x=inputs[name]: fn(lib, x)) for name, lib in libs.items()})

    cases = [
        case("rfft 64 x 1024 float32", lambda m, x: m.fft.rfft(x["r1k"])),
        case("rfft 16 x 4096 float32", lambda m, x: m.fft.rfft(x["r4k"])),
        case("rfft 64 x 1000 float32 (2^3 5^3)", lambda m, x: m.fft.rfft(x["rodd"])),
        case("irfft 64 x 1024", lambda m, x: m.fft.irfft(m.fft.rfft(x["r1k"]))),
        case("fft 64 x 1024 complex64", lambda m, x: m.fft.fft(x["c1k"])),
        case("fft2 256 x 256 complex64", lambda m, x: m.fft.fft2(x["c2d"])),
        case("stft 4 x 16000, n_fft 400, hop 160", lambda m, x: m.stft(
            x["stft"], 400, 160, window=m.hann_window(400), return_complex=True)),
        case("complex mul 1M", lambda m, x: x["cbig"] * x["cbig"]),
        case("complex abs 1M", lambda m, x: x["cbig"].abs()),
        case("complex exp 1M", lambda m, x: x["cbig"].exp()),
    ]
    print_table(f"FFT and complex math ({args.threads} thread(s))", compare(cases))


if __name__ == "__main__":
    main()
