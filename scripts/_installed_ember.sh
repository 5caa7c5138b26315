# Sourced by the scripts that build programs out of tree against an installed Ember
# (build_cpp_examples.sh, build_libtorch_tests.sh, build_pytorch_cpp_examples.sh). Provides:
#   $tmp        a scratch folder removed on exit
#   quiet CMD   run CMD showing its output only when it fails
#   install_ember BUILD PREFIX   build libember in BUILD and install it to PREFIX
#   $generator  (-G Ninja) when ninja is there
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
quiet() { "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
install_ember() {
  quiet cmake --build "$1" --target ember -j2
  quiet cmake --install "$1" --prefix "$2"
}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
