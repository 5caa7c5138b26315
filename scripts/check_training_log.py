"""Checks that a pytorch/examples libtorch program trained, from its output (scripts/build_pytorch_cpp_examples.sh).

    python3 scripts/check_training_log.py NAME OUTPUT_FILE
mnist / dcgan: the logged losses are finite and fall below the first (mnist: among the last three); regression: it
reached its stop criterion; autograd: it ran to the end. Prints one line and exits 1 on a failure.
"""
import math
import re
import sys


def losses(text, pattern):
    return [float(m) for m in re.findall(pattern, text)]


def check(name, text):
    if name == "mnist":
        ls = losses(text, r"Train Epoch: \d+ \[\s*\d+/\s*\d+\] Loss: ([-\d.naif]+)")
        ok = len(ls) >= 3 and all(math.isfinite(v) for v in ls) and min(ls[-3:]) < ls[0]
        return ok, f"{len(ls)} logged losses, {ls[0]:.4f} -> {ls[-1]:.4f}" if ls else "no losses logged"
    if name == "dcgan":
        pairs = re.findall(r"D_loss: ([-\d.naif]+) \| G_loss: ([-\d.naif]+)", text)
        d = [float(a) for a, _ in pairs]
        # a GAN's losses oscillate: the discriminator learning shows as D_loss falling below its start
        ok = len(d) >= 3 and all(math.isfinite(float(a)) and math.isfinite(float(b)) for a, b in pairs) and min(d[1:]) < d[0]
        return ok, f"{len(pairs)} logged steps, D_loss {d[0]:.4f} -> {d[-1]:.4f}" if pairs else "no losses logged"
    if name == "regression":
        m = re.search(r"Loss: ([-\d.e]+) after (\d+) batches", text)
        return bool(m) and float(m.group(1)) < 1e-3, m.group(0) if m else "did not reach its stop criterion"
    if name == "autograd":
        ok = "Computing higher-order gradients" in text and "Using custom autograd function" in text
        return ok, "ran every section" if ok else "stopped early"
    return False, f"unknown program {name}"


def main():
    name, path = sys.argv[1], sys.argv[2]
    ok, what = check(name, open(path, errors="replace").read().replace("\r", "\n"))
    print(f"[{name}] {'trains' if ok and name in ('mnist', 'dcgan') else 'OK' if ok else 'FAILED'}: {what}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
