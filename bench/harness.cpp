#include "harness.hpp"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "timing.hpp"

namespace bench {

namespace {

constexpr const char* kFamilies[] = {"mlp", "elem_chain", "scalar_chain", "linearize", "hessian", "jacobian", "matmul", "special", "einsum", "tropical", "grad_call", "linalg", "trg", "indexing", "conv", "eager", "control", "vmap", "checkpoint", "sparse", "gmm", "lstm_adbench"};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

/// A "Vm...:   1234 kB" field of /proc/self/status in MiB; 0 where it cannot be read.
double status_mb(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::atof(line.c_str() + key.size() + 1) / 1024.0;
  }
  return 0;
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--threads") {
      options.threads = std::stoi(value);
      if (options.threads < 1) throw std::invalid_argument("--threads must be at least 1");
    } else if (arg == "--cases") {
      options.cases = split_commas(value);
      for (const std::string& name : options.cases) {
        if (std::find(std::begin(kFamilies), std::end(kFamilies), name) == std::end(kFamilies)) {
          throw std::invalid_argument("unknown case family " + name);
        }
      }
    } else if (arg == "--only") {
      options.only = split_commas(value);
    } else if (arg == "--budget") {
      options.budget_s = std::stod(value);
    } else if (arg == "--einsum-networks") {
      options.einsum_networks = value;
    } else {
      throw std::invalid_argument("unknown option " + arg);
    }
  }
  return options;
}

bool wants(const Options& options, const std::string& family) {
  return options.cases.empty() ||
         std::find(options.cases.begin(), options.cases.end(), family) != options.cases.end();
}

bool selected(const Options& options, const std::string& key) {
  return options.only.empty() || std::find(options.only.begin(), options.only.end(), key) != options.only.end();
}

namespace {
int failed_check_count = 0;
}  // namespace

void report_failed_check(const char* format, ...) {
  std::fputs("bench: ", stderr);
  std::va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  ++failed_check_count;
}

int failed_checks() { return failed_check_count; }

void reset_peak_rss() {
  // Freed blocks that glibc keeps would otherwise count towards the next case's baseline.
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  static bool warned = false;
  if (!clear && !warned) {
    warned = true;
    std::fprintf(stderr, "bench: cannot write /proc/self/clear_refs; peak_rss_mb is the process peak\n");
  }
}

double current_rss_mb() { return status_mb("VmRSS"); }

Memory read_memory(double base_mb) { return Memory{base_mb, status_mb("VmHWM")}; }

int repetitions_for(double one_run_s, double budget_s, int min, int max) {
  if (one_run_s <= 0) return max;
  const double wanted = std::ceil(budget_s / one_run_s);
  return static_cast<int>(std::clamp(wanted, static_cast<double>(min), static_cast<double>(max)));
}

std::vector<Measurement> measure(const std::vector<Impl>& impls, double budget_s) {
  std::vector<Measurement> results(impls.size());
  double round_s = 0, longest_s = 0;
  for (std::size_t k = 0; k < impls.size(); ++k) {
    double steady_s = 0;
    results[k].memory = measure_memory([&] {
      impls[k].run();
      steady_s = seconds(impls[k].run);
    });
    round_s += steady_s;
    longest_s = std::max(longest_s, steady_s);
  }
  const int reps = repetitions_for(round_s, budget_s * static_cast<double>(impls.size()));
  // Short calls run in turns of one settling call and kBurst timed ones (harness.hpp says why);
  // long ones one timed call per turn.
  constexpr int kBurst = 4;
  const bool bursts = longest_s < kSettleBelow_s;
  const int per_turn = bursts ? kBurst : 1;
  std::vector<std::vector<double>> times(impls.size());
  for (int r = 0; r < reps; r += per_turn) {
    for (std::size_t k = 0; k < impls.size(); ++k) {
      if (bursts) impls[k].run();
      for (int b = 0; b < per_turn && r + b < reps; ++b) times[k].push_back(seconds(impls[k].run));
    }
  }
  for (std::size_t k = 0; k < impls.size(); ++k) {
    results[k].median_s = median(std::move(times[k]));
    results[k].repetitions = reps;
  }
  return results;
}

void print_line(const std::string& case_name, const std::string& impl, const std::string& size,
                const std::string& dtype, double median_s, const Memory& memory, int repetitions,
                const std::string& extra) {
  std::printf("case=%s impl=%s size=%s median_s=%.6g dtype=%s peak_rss_mb=%.1f base_rss_mb=%.1f reps=%d%s\n",
              case_name.c_str(), impl.c_str(), size.c_str(), median_s, dtype.c_str(), memory.peak_mb,
              memory.base_mb, repetitions, extra.c_str());
  std::fflush(stdout);
}

std::string field(const char* key, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, " %s=%.4g", key, value);
  return buffer;
}

}  // namespace bench
