// LibTorch (PyTorch's C++ API) on bench/cases_eager.cpp's cases, printing the same case lines with
// impl=libtorch: one add or matmul on 2x2 f64 (per operation, 1000 per timed run), a 100-operation
// chain with backward(), an MLP SGD step (784-512-512-10, batch 256, f32). A peer program only:
// scripts/bench builds it where Debian's libtorch-dev is installed.
//
//   libtorch_eager [--threads N] [--budget S]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

/// Median seconds of `run` over repetitions that fill about `budget` seconds (5 to 201), after
/// two untimed warm-up calls, and the repetition count.
std::pair<double, int> measure(const std::function<void()>& run, double budget) {
  using Clock = std::chrono::steady_clock;
  run();
  const auto start = Clock::now();
  run();
  const double steady = std::chrono::duration<double>(Clock::now() - start).count();
  const int reps = steady <= 0 ? 201 : static_cast<int>(std::clamp(std::ceil(budget / steady), 5.0, 201.0));
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], reps};
}

void report(const char* name, const char* size, const char* dtype, double median, int reps) {
  std::printf("case=%s impl=libtorch size=%s median_s=%.6g dtype=%s reps=%d\n", name, size, median, dtype, reps);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  double budget = 1.5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--budget") == 0) budget = std::atof(argv[i + 1]);
  }
  torch::set_num_threads(threads);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  constexpr int kOps = 1000;

  const torch::Tensor start = torch::tensor({1.0, 0.5, -0.25, 2.0}, f64).reshape({2, 2});
  const torch::Tensor b_add = torch::tensor({1e-3, -2e-3, 3e-3, 0.0}, f64).reshape({2, 2});
  const double c = std::cos(0.3), s = std::sin(0.3);
  const torch::Tensor b_mm = torch::tensor({c, -s, s, c}, f64).reshape({2, 2});
  auto [add_s, add_reps] = measure([&] {
    torch::Tensor x = start;
    for (int i = 0; i < kOps; ++i) x = x + b_add;
  }, budget);
  report("eager_add", "2x2", "f64", add_s / kOps, add_reps);
  auto [mm_s, mm_reps] = measure([&] {
    torch::Tensor x = start;
    for (int i = 0; i < kOps; ++i) x = torch::matmul(x, b_mm);
  }, budget);
  report("eager_matmul", "2x2", "f64", mm_s / kOps, mm_reps);

  const torch::Tensor x0 = torch::tensor({0.1, 0.2, 0.3, 0.4}, f64).reshape({2, 2});
  auto [chain_s, chain_reps] = measure([&] {
    torch::Tensor x = x0.clone().requires_grad_();
    torch::Tensor y = x;
    for (int i = 0; i < 100; ++i) {
      switch (i % 4) {
        case 0: y = torch::sin(y); break;
        case 1: y = y * x; break;
        case 2: y = y + 0.5; break;
        default: y = torch::tanh(y); break;
      }
    }
    y.sum().backward();
  }, budget);
  report("eager_chain100_fwd_bwd", "2x2", "f64", chain_s, chain_reps);

  constexpr std::int64_t kBatch = 256, kIn = 784, kHidden = 512, kOut = 10;
  torch::manual_seed(1);
  std::vector<torch::Tensor> params = {
      (torch::randn({kIn, kHidden}) * 0.03).requires_grad_(), (torch::randn({kHidden}) * 0.01).requires_grad_(),
      (torch::randn({kHidden, kHidden}) * 0.04).requires_grad_(), (torch::randn({kHidden}) * 0.01).requires_grad_(),
      (torch::randn({kHidden, kOut}) * 0.04).requires_grad_(), (torch::randn({kOut}) * 0.01).requires_grad_()};
  const torch::Tensor x = torch::randn({kBatch, kIn});
  torch::Tensor labels = torch::zeros({kBatch, kOut});
  for (std::int64_t i = 0; i < kBatch; ++i) labels[i][i % kOut] = 1.0;
  auto [step_s, step_reps] = measure([&] {
    const torch::Tensor h1 = torch::tanh(torch::matmul(x, params[0]) + params[1]);
    const torch::Tensor h2 = torch::tanh(torch::matmul(h1, params[2]) + params[3]);
    const torch::Tensor logits = torch::matmul(h2, params[4]) + params[5];
    const torch::Tensor loss = -(labels * torch::log_softmax(logits, -1)).sum(-1).mean();
    loss.backward();
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : params) {
      p.sub_(p.grad() * 1e-3);
      p.mutable_grad() = torch::Tensor();
    }
  }, budget);
  report("eager_mlp_step", "784-512-512-10x256", "f32", step_s, step_reps);
  return 0;
}
