#pragma once
// Trees: structured arguments and results of the transforms (tenferro/transforms.hpp), as JAX's
// pytrees. A tree is a leaf (a Tensor, or a Traced inside a traced function) or a container of
// trees:
//
//   std::vector<T>, std::array<T, N>, std::tuple<T...>, std::pair<T, U>,
//   std::map<std::string, T>, std::optional<T> (empty: no leaves),
//   a registered struct template S<T> whose fields are trees (TENFERRO_TREE_FIELDS below),
//
// nested to any depth. The transforms take trees of Tensors, call the function with the same trees
// of Traced, and return gradients as the same trees of Tensors:
//
//   template <class T> struct Layer { T w, b; };
//   TENFERRO_TREE_FIELDS(Layer, w, b)                        // at namespace scope, once
//
//   auto loss = [](const std::vector<Layer<tf::Traced>>& net, const tf::Traced& x) { ... };
//   std::vector<Layer<tf::Tensor>> g = tf::grad(loss)(net, x);   // same structure as net
//
// Leaves are visited depth-first in a fixed order: containers in their element order (a map in key
// order), struct fields in the order registered. with_leaf_t<T, L> is the tree T with its leaves
// replaced by L (Layer<Tensor> -> Layer<Traced>); tree_map applies a function to every leaf, and
// builds the result tree from the results.
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenferro/tensor.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

/// A leaf standing for the position of a leaf in flattened order (the structure of a tree,
/// without its values).
struct LeafIndex {
  std::size_t index = 0;
};

/// The fields of a registered struct template: TreeFields<S<T>>::tie(s) gives a tuple of
/// references to s's fields, in order (TENFERRO_TREE_FIELDS specializes it). Unspecialized: not a
/// tree.
template <class S>
struct TreeFields;

// Registers the struct template `Struct` (one type parameter, the leaf type; its fields are
// trees of it) as a tree with the listed fields, at namespace scope:
//   template <class T> struct Layer { T w, b; };
//   TENFERRO_TREE_FIELDS(Layer, w, b)
// Up to 16 fields. The struct must be an aggregate whose fields are exactly the registered ones,
// in declaration order (results are built by aggregate initialization).
#define TENFERRO_TREE_FIELDS(Struct, ...)                                       \
  template <class TenferroLeaf>                                                 \
  struct tenferro::TreeFields<Struct<TenferroLeaf>> {                           \
    template <class Self>                                                       \
    static auto tie(Self& s) {                                                  \
      return std::tie(TENFERRO_TREE_PREFIX_EACH(__VA_ARGS__));                   \
    }                                                                           \
    static constexpr const char* names = #__VA_ARGS__;                          \
  };
#define TENFERRO_TREE_PREFIX_EACH(...) \
  TENFERRO_TREE_PICK(__VA_ARGS__, TENFERRO_TREE_P16, TENFERRO_TREE_P15, TENFERRO_TREE_P14, TENFERRO_TREE_P13, \
                     TENFERRO_TREE_P12, TENFERRO_TREE_P11, TENFERRO_TREE_P10, TENFERRO_TREE_P9, TENFERRO_TREE_P8, \
                     TENFERRO_TREE_P7, TENFERRO_TREE_P6, TENFERRO_TREE_P5, TENFERRO_TREE_P4, TENFERRO_TREE_P3,    \
                     TENFERRO_TREE_P2, TENFERRO_TREE_P1)(__VA_ARGS__)
#define TENFERRO_TREE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, NAME, ...) NAME
#define TENFERRO_TREE_P1(a) s.a
#define TENFERRO_TREE_P2(a, ...) s.a, TENFERRO_TREE_P1(__VA_ARGS__)
#define TENFERRO_TREE_P3(a, ...) s.a, TENFERRO_TREE_P2(__VA_ARGS__)
#define TENFERRO_TREE_P4(a, ...) s.a, TENFERRO_TREE_P3(__VA_ARGS__)
#define TENFERRO_TREE_P5(a, ...) s.a, TENFERRO_TREE_P4(__VA_ARGS__)
#define TENFERRO_TREE_P6(a, ...) s.a, TENFERRO_TREE_P5(__VA_ARGS__)
#define TENFERRO_TREE_P7(a, ...) s.a, TENFERRO_TREE_P6(__VA_ARGS__)
#define TENFERRO_TREE_P8(a, ...) s.a, TENFERRO_TREE_P7(__VA_ARGS__)
#define TENFERRO_TREE_P9(a, ...) s.a, TENFERRO_TREE_P8(__VA_ARGS__)
#define TENFERRO_TREE_P10(a, ...) s.a, TENFERRO_TREE_P9(__VA_ARGS__)
#define TENFERRO_TREE_P11(a, ...) s.a, TENFERRO_TREE_P10(__VA_ARGS__)
#define TENFERRO_TREE_P12(a, ...) s.a, TENFERRO_TREE_P11(__VA_ARGS__)
#define TENFERRO_TREE_P13(a, ...) s.a, TENFERRO_TREE_P12(__VA_ARGS__)
#define TENFERRO_TREE_P14(a, ...) s.a, TENFERRO_TREE_P13(__VA_ARGS__)
#define TENFERRO_TREE_P15(a, ...) s.a, TENFERRO_TREE_P14(__VA_ARGS__)
#define TENFERRO_TREE_P16(a, ...) s.a, TENFERRO_TREE_P15(__VA_ARGS__)

namespace detail {
template <class T>
struct is_tree_leaf : std::bool_constant<std::is_same_v<T, Tensor> || std::is_same_v<T, Traced> ||
                                         std::is_same_v<T, LeafIndex>> {};

template <class S>
concept registered_tree_struct = requires(S& s) { TreeFields<S>::tie(s); };

template <class T, class L>
struct with_leaf {};  // not a tree: no `type`
template <class T, class L>
concept mappable = requires { typename with_leaf<T, L>::type; };

template <class T, class L>
  requires is_tree_leaf<T>::value
struct with_leaf<T, L> {
  using type = L;
};
template <class T, class L>
  requires mappable<T, L>
struct with_leaf<std::vector<T>, L> {
  using type = std::vector<typename with_leaf<T, L>::type>;
};
template <class T, std::size_t N, class L>
  requires mappable<T, L>
struct with_leaf<std::array<T, N>, L> {
  using type = std::array<typename with_leaf<T, L>::type, N>;
};
template <class... T, class L>
  requires(mappable<T, L> && ...)
struct with_leaf<std::tuple<T...>, L> {
  using type = std::tuple<typename with_leaf<T, L>::type...>;
};
template <class T, class U, class L>
  requires mappable<T, L> && mappable<U, L>
struct with_leaf<std::pair<T, U>, L> {
  using type = std::pair<typename with_leaf<T, L>::type, typename with_leaf<U, L>::type>;
};
template <class T, class L>
  requires mappable<T, L>
struct with_leaf<std::map<std::string, T>, L> {
  using type = std::map<std::string, typename with_leaf<T, L>::type>;
};
template <class T, class L>
  requires mappable<T, L>
struct with_leaf<std::optional<T>, L> {
  using type = std::optional<typename with_leaf<T, L>::type>;
};
template <template <class> class S, class T, class L>
  requires is_tree_leaf<T>::value && registered_tree_struct<S<T>>
struct with_leaf<S<T>, L> {
  using type = S<L>;
};

template <class T>
struct is_tree : std::bool_constant<mappable<T, LeafIndex>> {};
}  // namespace detail

/// The tree T with every leaf replaced by L.
template <class T, class L>
using with_leaf_t = typename detail::with_leaf<std::remove_cvref_t<T>, L>::type;

/// Whether T is a tree (a leaf, a supported container of trees, or a registered struct).
template <class T>
inline constexpr bool is_tree_v = detail::is_tree<std::remove_cvref_t<T>>::value;

/// Calls visit(leaf) for every leaf of `tree`, depth-first in the order of the header comment.
template <class T, class Visit>
void tree_for_each(T&& tree, Visit&& visit) {
  using U = std::remove_cvref_t<T>;
  static_assert(is_tree_v<U>, "tenferro: not a tree (a Tensor, a Traced, a std container of trees, or a "
                              "struct template registered with TENFERRO_TREE_FIELDS)");
  if constexpr (detail::is_tree_leaf<U>::value) {
    visit(tree);
  } else if constexpr (detail::registered_tree_struct<U>) {
    std::apply([&](auto&... field) { (tree_for_each(field, visit), ...); }, TreeFields<U>::tie(tree));
  } else if constexpr (requires { typename U::key_type; }) {  // map, in key order
    for (auto& entry : tree) tree_for_each(entry.second, visit);
  } else if constexpr (requires { tree.has_value(); }) {  // optional
    if (tree.has_value()) tree_for_each(*tree, visit);
  } else if constexpr (requires { std::tuple_size<U>::value; } && !requires { tree.size(); }) {  // tuple, pair
    std::apply([&](auto&... element) { (tree_for_each(element, visit), ...); }, tree);
  } else {  // vector, array
    for (auto& element : tree) tree_for_each(element, visit);
  }
}

/// The tree with_leaf_t<T, R> of f(leaf) over `tree`'s leaves, f called in leaf order.
template <class R, class T, class F>
with_leaf_t<T, R> tree_map(const T& tree, F&& f) {
  using U = std::remove_cvref_t<T>;
  if constexpr (detail::is_tree_leaf<U>::value) {
    return f(tree);
  } else if constexpr (detail::registered_tree_struct<U>) {
    // Built by aggregate initialization from the mapped fields, in registered order (a braced
    // list evaluates left to right); leaves such as Traced need not be default-constructible.
    return std::apply(
        [&](const auto&... field) {
          static_assert(requires { with_leaf_t<U, R>{tree_map<R>(field, f)...}; },
                        "tenferro: a registered tree struct must be an aggregate whose fields are exactly the "
                        "registered ones, in declaration order");
          return with_leaf_t<U, R>{tree_map<R>(field, f)...};
        },
        TreeFields<U>::tie(tree));
  } else if constexpr (requires { typename U::key_type; }) {  // map, in key order
    with_leaf_t<U, R> out;
    for (const auto& [key, value] : tree) out.emplace(key, tree_map<R>(value, f));
    return out;
  } else if constexpr (requires { tree.has_value(); }) {  // optional
    with_leaf_t<U, R> out;
    if (tree.has_value()) out.emplace(tree_map<R>(*tree, f));
    return out;
  } else if constexpr (requires { std::tuple_size<U>::value; } && requires { tree.size(); }) {  // array
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return with_leaf_t<U, R>{tree_map<R>(tree[I], f)...};
    }(std::make_index_sequence<std::tuple_size_v<U>>{});
  } else if constexpr (requires { std::tuple_size<U>::value; }) {  // tuple, pair
    // A braced list evaluates its elements left to right.
    return std::apply([&](const auto&... element) { return with_leaf_t<U, R>{tree_map<R>(element, f)...}; }, tree);
  } else {  // vector
    with_leaf_t<U, R> out;
    out.reserve(tree.size());
    for (const auto& element : tree) out.push_back(tree_map<R>(element, f));
    return out;
  }
}

namespace detail {
/// Field `k` of a registered struct's comma-separated field names ("w, b" -> "b" for k = 1).
inline std::string field_name(const char* names, std::size_t k) {
  std::string_view all(names);
  for (std::size_t i = 0; i < k; ++i) {
    const auto comma = all.find(',');
    if (comma == std::string_view::npos) return "?";
    all.remove_prefix(comma + 1);
  }
  all = all.substr(0, all.find(','));
  while (!all.empty() && all.front() == ' ') all.remove_prefix(1);
  while (!all.empty() && all.back() == ' ') all.remove_suffix(1);
  return std::string(all);
}
}  // namespace detail

/// Calls visit(path, leaf) for every leaf of `tree`, in tree_for_each's order; `path` names the
/// leaf from `prefix` as an expression would: "[2]" (vector, array, tuple, pair), "['key']" (map),
/// ".field" (registered struct); an optional adds nothing. Errors about a leaf name it this way.
template <class T, class Visit>
void tree_for_each_path(const T& tree, const std::string& prefix, Visit&& visit) {
  using U = std::remove_cvref_t<T>;
  static_assert(is_tree_v<U>, "tenferro: not a tree");
  if constexpr (detail::is_tree_leaf<U>::value) {
    visit(prefix, tree);
  } else if constexpr (detail::registered_tree_struct<U>) {
    std::size_t k = 0;
    std::apply([&](const auto&... field) {
      ((tree_for_each_path(field, prefix + "." + detail::field_name(TreeFields<U>::names, k++), visit)), ...);
    }, TreeFields<U>::tie(tree));
  } else if constexpr (requires { typename U::key_type; }) {
    for (const auto& entry : tree) tree_for_each_path(entry.second, prefix + "['" + entry.first + "']", visit);
  } else if constexpr (requires { tree.has_value(); }) {
    if (tree.has_value()) tree_for_each_path(*tree, prefix, visit);
  } else if constexpr (requires { std::tuple_size<U>::value; } && !requires { tree.size(); }) {
    std::size_t k = 0;
    std::apply([&](const auto&... element) { ((tree_for_each_path(element, prefix + "[" + std::to_string(k++) + "]", visit)), ...); },
               tree);
  } else {
    std::size_t k = 0;
    for (const auto& element : tree) tree_for_each_path(element, prefix + "[" + std::to_string(k++) + "]", visit);
  }
}

/// The number of leaves of `tree`.
template <class T>
std::size_t tree_leaf_count(const T& tree) {
  std::size_t n = 0;
  tree_for_each(tree, [&](const auto&) { ++n; });
  return n;
}

}  // namespace tenferro
