// einsum and tropical contraction cases.
//
// einsum: contraction time of tenferro's concrete einsum (path search cached, compiled program
// cached) on the networks, and the path each gets from Optimizer::Auto with its search
// time. Every network and our path go to an exchange file (--einsum-networks, default
// /tmp/tenferro_einsum_networks.txt) that torch_bench.py reads: it times torch.einsum in its own
// order and PyTorch following our path pair by pair, and scores NumPy's greedy and optimal paths
// with the same cost model (tenferro/einsum_path.hpp).
//
// tropical: max-plus matmul at N = 128 and 384 (f64) by semiring_dot_general, against the
// broadcast-then-reduce composition max_k(a[i,k] + b[k,j]) in tenferro and against an f64 GEMM
// of the same size.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

namespace {

using Labels = std::vector<std::vector<int>>;

/// A network in integer-label form with its sizes (one per label id).
struct Network {
  std::string name;
  std::string size;  // the size field of the result line
  Labels inputs;
  std::vector<int> output;
  std::vector<std::int64_t> label_size;
  bool timed = true;  // contraction timed (else the path alone)
};

std::vector<tf::Shape> shapes_of(const Network& n) {
  std::vector<tf::Shape> shapes;
  for (const auto& in : n.inputs) {
    tf::Shape s;
    for (int l : in) s.push_back(n.label_size[static_cast<std::size_t>(l)]);
    shapes.push_back(s);
  }
  return shapes;
}

/// One label per letter of a subscripts string like "abc,bcd,de->ae".
Network from_letters(std::string name, std::string size, const std::string& spec, std::int64_t n) {
  Network net{std::move(name), std::move(size), {{}}, {}, {}};
  std::vector<int> id(128, -1);
  auto label = [&](char c) {
    if (id[static_cast<std::size_t>(c)] < 0) {
      id[static_cast<std::size_t>(c)] = static_cast<int>(net.label_size.size());
      net.label_size.push_back(n);
    }
    return id[static_cast<std::size_t>(c)];
  };
  const std::size_t arrow = spec.find("->");
  for (char c : spec.substr(0, arrow)) {
    if (c == ',') {
      net.inputs.emplace_back();
    } else {
      net.inputs.back().push_back(label(c));
    }
  }
  for (char c : spec.substr(arrow + 2)) net.output.push_back(label(c));
  return net;
}

/// <psi|psi> of an open-boundary MPS: ket bonds k_i, bra bonds b_i, shared physical legs p_i.
Network mps(int length, std::int64_t bond, std::int64_t phys) {
  Network net{"einsum_mps", std::to_string(length) + "x" + std::to_string(bond) + "x" + std::to_string(phys), {}, {}, {}};
  net.label_size.assign(static_cast<std::size_t>(3 * length), bond);
  for (int i = 0; i < length; ++i) net.label_size[static_cast<std::size_t>(i)] = phys;
  for (int layer = 0; layer < 2; ++layer) {
    const int bonds = (layer == 0 ? 1 : 2) * length;
    for (int i = 0; i < length; ++i) {
      std::vector<int> t;
      if (i > 0) t.push_back(bonds + i - 1);
      t.push_back(i);
      if (i + 1 < length) t.push_back(bonds + i);
      net.inputs.push_back(t);
    }
  }
  return net;
}

/// A rows x cols square lattice, one tensor per site, one label per edge.
Network lattice(int rows, int cols, std::int64_t bond) {
  Network net{"einsum_lattice", std::to_string(rows) + "x" + std::to_string(cols) + "x" + std::to_string(bond), {}, {}, {}};
  std::vector<std::vector<int>> site(static_cast<std::size_t>(rows * cols));
  auto edge = [&](int a, int b) {
    const int l = static_cast<int>(net.label_size.size());
    net.label_size.push_back(bond);
    site[static_cast<std::size_t>(a)].push_back(l);
    site[static_cast<std::size_t>(b)].push_back(l);
  };
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (c + 1 < cols) edge(r * cols + c, r * cols + c + 1);
      if (r + 1 < rows) edge(r * cols + c, (r + 1) * cols + c);
    }
  }
  net.inputs = site;
  return net;
}

/// A random 3-regular graph on n vertices (pairing model, redrawn until simple; splitmix64 from
/// `seed`), one rank-3 tensor per vertex and one label of length `bond` per edge.
Network random_regular(int n, std::int64_t bond, std::uint64_t seed) {
  std::uint64_t state = seed;
  auto next = [&] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  while (true) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v) stubs.insert(stubs.end(), {v, v, v});
    for (std::size_t i = stubs.size(); i > 1; --i) std::swap(stubs[i - 1], stubs[next() % i]);
    std::vector<std::vector<int>> adj(static_cast<std::size_t>(n));
    bool simple = true;
    for (std::size_t i = 0; i < stubs.size() && simple; i += 2) {
      const int a = stubs[i], b = stubs[i + 1];
      auto& na = adj[static_cast<std::size_t>(a)];
      simple = a != b && std::find(na.begin(), na.end(), b) == na.end();
      na.push_back(b);
      adj[static_cast<std::size_t>(b)].push_back(a);
    }
    if (!simple) continue;
    Network net{"einsum_rrg", std::to_string(n) + "x" + std::to_string(bond), {}, {}, {}};
    net.inputs.assign(static_cast<std::size_t>(n), {});
    for (std::size_t i = 0; i < stubs.size(); i += 2) {
      const int l = static_cast<int>(net.label_size.size());
      net.label_size.push_back(bond);
      net.inputs[static_cast<std::size_t>(stubs[i])].push_back(l);
      net.inputs[static_cast<std::size_t>(stubs[i + 1])].push_back(l);
    }
    return net;
  }
}

/// The complete graph K_n: one tensor per vertex, one label of length `bond` per edge (every
/// contraction order has intermediates far larger than the inputs: the slicing case).
Network complete_graph(int n, std::int64_t bond) {
  Network net{"einsum_sliced", "K" + std::to_string(n) + "x" + std::to_string(bond), {}, {}, {}};
  net.inputs.assign(static_cast<std::size_t>(n), {});
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const int l = static_cast<int>(net.label_size.size());
      net.label_size.push_back(bond);
      net.inputs[static_cast<std::size_t>(i)].push_back(l);
      net.inputs[static_cast<std::size_t>(j)].push_back(l);
    }
  }
  return net;
}

std::vector<tf::Tensor> operands_for(const Network& net, tf::DType dtype, std::mt19937& rng) {
  std::vector<tf::Tensor> xs;
  for (const auto& shape : shapes_of(net)) {
    // Entries scaled so that contracting a leg of length n keeps magnitudes near 1.
    double scale = 1;
    for (auto d : shape) scale /= std::sqrt(static_cast<double>(d));
    std::normal_distribution<double> normal(0.0, std::pow(scale, 0.5));
    std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
    for (auto& x : v) x = normal(rng);
    tf::Tensor t = tf::Tensor::from(v, shape);
    if (dtype == tf::DType::F32) {
      std::vector<float> f(v.begin(), v.end());
      t = tf::Tensor::from(f, shape);
    }
    xs.push_back(t);
  }
  return xs;
}

/// The same contraction unsliced and sliced to a memory limit of 2^20 elements (8 MiB of f64):
/// time and peak resident memory of each (peak_rss_mb - base_rss_mb is what the run added), so
/// the limit's effect shows.
void sliced_case(const Options& options, const Network& net) {
  if (!selected(options, net.name)) return;
  const auto shapes = shapes_of(net);
  tf::tn::Options limited;
  limited.path.memory_limit = double(1 << 20);
  const auto whole = tf::einsum_path(net.inputs, net.output, shapes);
  const auto sliced = tf::einsum_path(net.inputs, net.output, shapes, limited);
  std::mt19937 rng(6);
  const std::vector<tf::Tensor> xs = operands_for(net, tf::DType::F64, rng);
  const std::span<const tf::Tensor> operands(xs);
  // Sliced first, each from an empty buffer pool, so that neither run's peak holds the other's
  // pooled buffers (the pool keeps freed buffers for reuse).
  tf::trim_buffer_pool();
  const auto ms = measure({{"sliced", [&] { tf::einsum(net.inputs, net.output, operands, limited); }}}, options.budget_s);
  tf::trim_buffer_pool();
  const auto mu = measure({{"unsliced", [&] { tf::einsum(net.inputs, net.output, operands); }}}, options.budget_s);
  tf::trim_buffer_pool();
  const std::vector<Measurement> m = {mu[0], ms[0]};
  if (!tf::allclose(tf::einsum(net.inputs, net.output, operands), tf::einsum(net.inputs, net.output, operands, limited),
                    1e-9, 1e-12)) {
    report_failed_check("sliced and unsliced einsum differ");
  }
  print_line(net.name, "tenferro_unsliced", net.size, "f64", m[0].median_s, m[0].memory, m[0].repetitions,
             field("log2_size", whole.log2_size) + field("intermediate_mb", std::exp2(whole.log2_size) * 8 / (1 << 20)));
  print_line(net.name, "tenferro", net.size, "f64", m[1].median_s, m[1].memory, m[1].repetitions,
             field("limit_mb", 8.0) + field("log2_size", sliced.log2_size) + field("slices", sliced.slices) +
                 field("log2_flops_overhead", sliced.log2_flops - sliced.log2_flops_unsliced) +
                 field("time_vs_unsliced", m[1].median_s / m[0].median_s));
}

void write_network(std::ofstream& out, const Network& net, const char* dtype, const tf::tn::ContractionPath& path) {
  out << "case " << net.name << ' ' << net.size << ' ' << dtype << ' ' << (net.timed ? 1 : 0) << '\n';
  out << "sizes";
  for (auto s : net.label_size) out << ' ' << s;
  out << "\ninputs " << net.inputs.size() << '\n';
  for (const auto& in : net.inputs) {
    for (std::size_t a = 0; a < in.size(); ++a) out << (a ? " " : "") << in[a];
    out << '\n';
  }
  out << "output";
  for (int l : net.output) out << ' ' << l;
  out << "\npath";
  for (auto [i, j] : path.steps) out << ' ' << i << ' ' << j;
  out << '\n';
}

void einsum_case(const Options& options, const Network& net, const char* dtype_name, std::ofstream& exchange) {
  if (!selected(options, net.name)) return;
  const tf::DType dtype = std::string(dtype_name) == "f32" ? tf::DType::F32 : tf::DType::F64;
  const auto shapes = shapes_of(net);
  // The search itself, uncached: the network as einsum's lowering gives it to the optimizer.
  const auto start = std::chrono::steady_clock::now();
  const tf::tn::ContractionPath path = tf::einsum_path(net.inputs, net.output, shapes);
  const double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_network(exchange, net, dtype_name, path);
  const std::string quality = field("log2_flops", path.log2_flops) + field("log2_size", path.log2_size);
  print_line("einsum_path_" + net.name.substr(7), "tenferro_auto", net.size, dtype_name, search_s, {}, 1,
             quality + " tensors=" + std::to_string(net.inputs.size()));
  if (!net.timed) return;
  std::mt19937 rng(5);
  const std::vector<tf::Tensor> xs = operands_for(net, dtype, rng);
  const auto m = measure({{"tenferro", [&] { tf::einsum(net.inputs, net.output, std::span<const tf::Tensor>(xs)); }}},
                         options.budget_s);
  print_line(net.name, "tenferro", net.size, dtype_name, m[0].median_s, m[0].memory, m[0].repetitions, quality);
}

std::string exchange_path(const Options& options) {
  return options.einsum_networks.empty() ? "/tmp/tenferro_einsum_networks.txt" : options.einsum_networks;
}

}  // namespace

void run_einsum(const Options& options) {
  std::ofstream exchange(exchange_path(options));
  einsum_case(options, from_letters("einsum_matmul", "1024", "ij,jk->ik", 1024), "f64", exchange);
  einsum_case(options, from_letters("einsum_matmul", "1024", "ij,jk->ik", 1024), "f32", exchange);
  Network batched = from_letters("einsum_batched", "64x128", "bij,bjk->bik", 128);
  batched.label_size[0] = 64;
  einsum_case(options, batched, "f64", exchange);
  einsum_case(options, from_letters("einsum_abc_bcd_de", "64", "abc,bcd,de->ae", 64), "f64", exchange);
  einsum_case(options, from_letters("einsum_chain3", "512", "ij,jk,kl->il", 512), "f64", exchange);
  einsum_case(options, mps(50, 64, 2), "f64", exchange);
  einsum_case(options, lattice(6, 6, 4), "f64", exchange);
  einsum_case(options, random_regular(60, 2, 1), "f64", exchange);
  Network large = random_regular(200, 2, 2);
  large.timed = false;
  einsum_case(options, large, "f64", exchange);
  sliced_case(options, complete_graph(7, 4));
}

void run_tropical(const Options& options) {
  for (std::int64_t n : {128, 384}) {
    std::mt19937 rng(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> av(static_cast<std::size_t>(n * n)), bv(av.size());
    for (auto& x : av) x = normal(rng);
    for (auto& x : bv) x = normal(rng);
    const tf::Tensor a = tf::Tensor::from(av, {n, n}), b = tf::Tensor::from(bv, {n, n});
    using T = tf::Traced;
    tf::Program fused = tf::trace(
        [](T x, T y) { return tf::semiring_dot_general(x, y, tf::Semiring::MaxPlus, tf::DotDims{{}, {}, {1}, {0}}); }, a, b);
    tf::Program composed = tf::trace(
        [n](T x, T y) {
          const T xb = tf::broadcast_to(tf::reshape(x, {n, n, 1}), {n, n, n});
          const T yb = tf::broadcast_to(tf::reshape(y, {1, n, n}), {n, n, n});
          return tf::max(xb + yb, {1});
        },
        a, b);
    tf::Program gemm = tf::trace([](T x, T y) { return tf::matmul(x, y); }, a, b);
    if (!tf::allclose(fused.run({a, b})[0], composed.run({a, b})[0], 0, 0)) {
      report_failed_check("tropical matmul %lld: kernel and composition differ", static_cast<long long>(n));
    }
    const auto m = measure({{"tenferro", [&] { fused.run({a, b}); }},
                            {"composition", [&] { composed.run({a, b}); }},
                            {"gemm", [&] { gemm.run({a, b}); }}},
                           options.budget_s);
    const std::string size = std::to_string(n);
    print_line("tropical_matmul", "tenferro_composition", size, "f64", m[1].median_s, m[1].memory, m[1].repetitions);
    print_line("tropical_matmul", "tenferro_gemm_f64", size, "f64", m[2].median_s, m[2].memory, m[2].repetitions);
    print_line("tropical_matmul", "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions,
               field("speedup_vs_composition", m[1].median_s / m[0].median_s) +
                   field("ratio_vs_gemm", m[0].median_s / m[2].median_s));
  }
}

}  // namespace bench
