#pragma once
// Custom differentiable functions in C++, libtorch style:
//
//   struct Square : ember::autograd::Function<Square> {
//     static Tensor forward(AutogradContext* ctx, Tensor x) { ctx->save_for_backward({x}); return x * x; }
//     static variable_list backward(AutogradContext* ctx, variable_list g) {
//       return {g[0] * 2 * ctx->get_saved_variables()[0]};
//     }
//   };
//   Tensor y = Square::apply(x);
//
// forward runs without recording; its Tensor arguments become the node's inputs (other arguments
// get no gradient slot); backward returns one gradient per Tensor argument (undefined: none).
#include <any>
#include <map>
#include <string>
#include <type_traits>

#include "ember/autograd/node.h"
#include "ember/core/ivalue.h"

namespace ember::autograd {

struct EMBER_API AutogradContext {
  void save_for_backward(const variable_list& ts) { to_save_ = ts; }
  variable_list get_saved_variables() const;
  void mark_dirty(const variable_list& ts) { dirty_ = ts; }
  void mark_non_differentiable(const variable_list& ts) { non_diff_ = ts; }
  void set_materialize_grads(bool v) { materialize_ = v; }
  bool needs_input_grad(size_t i) const { return i < needs_.size() && needs_[i]; }
  std::map<std::string, IValue> saved_data;  // anything else backward needs

  // internal
  variable_list to_save_, dirty_, non_diff_;
  std::vector<SavedVariable> saved_;
  std::vector<bool> needs_;
  bool materialize_ = true;
  std::weak_ptr<Node> node_;
};

template <class T>
struct CppNode : Node {
  AutogradContext ctx;
  std::string name() const override { return std::string("CppNode<") + typeid(T).name() + ">"; }
  void release_variables() override {
    for (auto& s : ctx.saved_) s.reset();
  }
  variable_list apply(variable_list&& grads) override {
    if (ctx.materialize_)
      for (size_t i = 0; i < grads.size(); i++)
        if (!grads[i].defined() && i < output_meta.size()) grads[i] = zeros_for_output(i);
    variable_list r = T::backward(&ctx, std::move(grads));
    EMBER_CHECK(r.size() >= next_edges.size(), "function ", name(), " returned an incorrect number of gradients "
                "(expected ", next_edges.size(), ", got ", r.size(), ")");
    r.resize(next_edges.size());
    return r;
  }
};

namespace detail {
inline void collect(variable_list&) {}
template <class A, class... Rest>
void collect(variable_list& out, const A& a, const Rest&... rest) {
  if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) out.push_back(a);
  collect(out, rest...);
}
inline variable_list as_list(const Tensor& t) { return {t}; }
inline variable_list as_list(const variable_list& v) { return v; }
EMBER_API void finish_function(const std::shared_ptr<Node>& node, AutogradContext& ctx, const variable_list& inputs,
                               variable_list& outputs);
}  // namespace detail

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    variable_list inputs;
    detail::collect(inputs, args...);
    auto node = std::make_shared<CppNode<T>>();
    for (const Tensor& t : inputs) node->ctx.needs_.push_back(requires_grad(t));
    node->ctx.node_ = node;
    using Out = decltype(T::forward(&node->ctx, std::forward<Args>(args)...));
    Out out;
    {
      AutoGradMode no_grad(false);
      out = T::forward(&node->ctx, std::forward<Args>(args)...);
    }
    variable_list outs = detail::as_list(out);
    detail::finish_function(node, node->ctx, inputs, outs);
    if constexpr (std::is_same_v<Out, Tensor>) return outs[0];
    else return outs;
  }
};

}  // namespace ember::autograd
