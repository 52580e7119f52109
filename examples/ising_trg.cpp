// The 2-D classical Ising model by Levin-Nave tensor renormalization group (TRG), differentiated
// through its SVDs: the free energy per site lnZ/N, the energy u = -d(lnZ/N)/dK and the specific
// heat c = K^2 d^2(lnZ/N)/dK^2, beside Onsager's exact solution.
//
//   ising_trg [--chi 24] [--niter 20] [--K 0.3,0.44,0.6 | --grid from:to:step] [--plot out.svg]
//
// prints one line per coupling K (15 significant digits), plus the wall time of that K:
//   case=trg chi=.. niter=.. K=.. lnz=.. u=.. c=.. onsager_lnz=.. onsager_u=.. onsager_c=.. seconds=..
// and with --plot writes an SVG of c(K): the TRG points and Onsager's exact curve.
//
// lnz_per_site is an ordinary C++ function of a traced rank-0 K. lnz_and_derivatives takes its
// value and first two derivatives by forward mode twice (tf::jvp of tf::jvp); tf::trace records
// that as one program, compiled once, and every K afterwards only runs it.
// bench/peers/trg_torch.py is the same algorithm in PyTorch, with the same conventions:
//
// * H = -sum s_i s_j (J = 1). Site tensor with legs T[r, u, l, d] (right, up, left, down), D = 2:
//     T[r,u,l,d] = 0.5 sqrt(l_r l_u l_l l_d) if r+u+l+d is even, else 0,  l = [2 cosh K, 2 sinh K];
//   one T per site, so N sites = N tensors.
// * Step n = 1..niter, on N / 2^(n-1) identical tensors: m = max|T|, T <- T / m,
//   lnZ/N += log(m) / 2^(n-1); then the two splits by SVD, truncated to k = min(D^2, chi) triplets
//   (no other cut-off), sqrt(S) to each side:
//     (r,u) x (l,d): reshape(T, [D^2, D^2])                  -> S1[r,u,a] = U sqrt(S), S3[a,l,d] = sqrt(S) Vh
//     (u,l) x (d,r): reshape(transpose(T, 1,2,3,0), [D^2, D^2]) -> S2[u,l,b], S4[b,d,r]
//   and the four halves around a plaquette (S1 lower left, S2 lower right, S3 upper right, S4
//   upper left) contract into the next tensor, its legs (lower left a, lower right b, upper right
//   c, upper left d) read as l, d, r, u after the 45-degree turn:
//     T'[c,d,a,b] = einsum("xwa,yxb,czy,dwz->cdab", S1, S2, S3, S4).
//   Each tensor then stands for 2^n sites.
// * Finally lnZ/N += log(sum_ij T[i,j,i,j]) / 2^niter: the periodic trace of the last tensor, a
//   torus of 2^niter sites. (In the ordered phase this finite torus has lnZ/N above the infinite
//   lattice's by ln(2) / 2^niter, 6.6e-7 at niter = 20: the two ground states.)
// * Singular values at most 1e-14 S[0] (numerically zero: the initial tensor has rank 2 of 4, and
//   the rank grows slowly) get weight exactly 0 and derivative 0 (sqrt_sv), since sqrt'(0) is
//   infinite; in exact arithmetic they are 0 and stay 0. linalg::svd's rules replace 1/(s_j - s_i)
//   and 1/(s_j + s_i) by Lorentzians (tenferro/linalg.hpp), so the exact degeneracies of those
//   zeros give finite derivatives.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "ising_trg_model.hpp"
#include "ising_trg_onsager.hpp"
#include "svg_plot.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

namespace {

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    if (comma > pos) out.push_back(std::stod(text.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return out;
}

/// from:to:step, `to` included (up to rounding).
std::vector<double> parse_grid(const std::string& text) {
  const std::size_t a = text.find(':'), b = text.find(':', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos) throw std::invalid_argument("--grid wants from:to:step");
  const double from = std::stod(text.substr(0, a)), to = std::stod(text.substr(a + 1, b - a - 1)),
               step = std::stod(text.substr(b + 1));
  if (!(step > 0) || to < from) throw std::invalid_argument("--grid wants from <= to and step > 0");
  std::vector<double> out;
  for (long i = 0; from + static_cast<double>(i) * step <= to + 1e-9 * step; ++i) out.push_back(from + static_cast<double>(i) * step);
  return out;
}

void write_plot(const std::string& path, const std::vector<double>& ks, const std::vector<double>& cs, long chi) {
  svg::Plot plot{"2-D Ising model: specific heat per site", "coupling K = J / T", "c = K^2 d^2(ln Z / N) / dK^2", {}, {}};
  const auto [kmin, kmax] = std::minmax_element(ks.begin(), ks.end());
  const double lo = *kmin - 0.02, hi = *kmax + 0.02;
  svg::Series exact{"Onsager (exact)", "#1f4e9c", {}, {}, false};
  for (int i = 0; i <= 600; ++i) {
    const double K = lo + (hi - lo) * i / 600.0;
    exact.x.push_back(K);
    exact.y.push_back(K > 0 ? ising::onsager(K).c : NAN);
  }
  plot.series.push_back(exact);
  plot.series.push_back({"TRG, chi = " + std::to_string(chi) + " (autodiff)", "#c0392b", ks, cs, true});
  plot.vlines.push_back({ising::kCriticalCoupling, "K_c"});
  svg::write(path, plot);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    long chi = 24;
    int niter = 20;
    std::vector<double> ks = {0.3, 0.44, 0.6};
    std::string plot_path;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
      const std::string value = argv[++i];
      if (arg == "--chi") chi = std::stol(value);
      else if (arg == "--niter") niter = std::stoi(value);
      else if (arg == "--K") ks = parse_list(value);
      else if (arg == "--grid") ks = parse_grid(value);
      else if (arg == "--plot") plot_path = value;
      else throw std::invalid_argument("unknown option " + arg);
    }
    if (chi < 2 || niter < 1 || ks.empty()) throw std::invalid_argument("need --chi >= 2, --niter >= 1 and some K");
    for (double K : ks) {
      if (!(K > 0)) throw std::invalid_argument("couplings must be positive");
    }

    // lnZ/N, d(lnZ/N)/dK and d^2(lnZ/N)/dK^2 as one program.
    const tf::Program observables = tf::trace(
        [chi, niter](const tf::Traced& K) { return ising::lnz_and_derivatives(K, chi, niter); }, tf::Tensor::scalar(1.0));
    std::vector<double> cs;
    for (double K : ks) {
      const auto start = std::chrono::steady_clock::now();
      const tf::Tensors out = observables.run({tf::Tensor::scalar(K)});
      const tf::Tensor &lnz = out[0], &slope = out[1];
      const double c = K * K * out[2].item<double>();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const ising::Exact e = ising::onsager(K);
      std::printf("case=trg chi=%ld niter=%d K=%.15g lnz=%.15g u=%.15g c=%.15g onsager_lnz=%.15g onsager_u=%.15g "
                  "onsager_c=%.15g seconds=%.3g\n",
                  chi, niter, K, lnz.item<double>(), -slope.item<double>(), c, e.lnz, e.u, e.c, seconds);
      std::fflush(stdout);
      cs.push_back(c);
    }
    if (!plot_path.empty()) write_plot(plot_path, ks, cs, chi);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ising_trg: %s\n", e.what());
    return 1;
  }
}
