# Sourced by the scripts that build programs out of tree against an installed Ember
# (build_cpp_examples.sh, build_libtorch_tests.sh, build_pytorch_cpp_examples.sh). Provides:
#   (the sourcing script sets $root, the repository root)
#   $tmp        a scratch folder removed on exit
#   quiet CMD   run CMD showing its output only when it fails
#   install_ember BUILD PREFIX   build libember in BUILD and install it to PREFIX
#   $generator  (-G Ninja) when ninja is there
#   build_against_installed SRC OUT PREFIX BUILD   configure and build the CMake project SRC in OUT against
#               the Ember installed in PREFIX, and fail if it saw the source tree or BUILD's generated headers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
quiet() { "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; return 1; }; }
install_ember() {
  quiet cmake --build "$1" --target ember -j2
  quiet cmake --install "$1" --prefix "$2"
}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
build_against_installed() {
  quiet cmake -S "$1" -B "$2" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$3"
  quiet cmake --build "$2" -j2
  # a consumer sees only the installed headers: no source or build tree on its include path
  if grep -rqI -e "$root/csrc" -e "$4/generated" "$2" 2>/dev/null; then
    echo "$1 was compiled against the source or build tree, not the installed headers" >&2
    exit 1
  fi
}
