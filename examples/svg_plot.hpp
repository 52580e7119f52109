#pragma once
// A small x-y plot written as a standalone SVG file: the x axis spans the data, the y axis runs
// from 0 (or the data's minimum, if negative) to a whole tick; "nice" ticks (1, 2 or 5 times a
// power of ten), axis labels, a title, series drawn as polylines or as circle markers, dashed
// vertical marker lines, and a legend. Non-finite points are skipped (a polyline is broken there).
// Only the standard library; the file opens in any browser.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace svg {

struct Series {
  std::string name, color;
  std::vector<double> x, y;
  bool markers = false;  ///< circles at the points (true) or a line through them (false)
};

struct VLine {
  double x;
  std::string label;
};

struct Plot {
  std::string title, xlabel, ylabel;
  std::vector<Series> series;
  std::vector<VLine> vlines;
};

namespace detail {

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

inline std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

/// A tick step of 1, 2 or 5 times a power of ten giving about `target` intervals over [lo, hi].
inline double tick_step(double lo, double hi, int target = 6) {
  const double raw = (hi - lo) / target, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10.0 * p;
}

/// [lo, hi] widened to whole tick steps (and to a non-empty range).
inline void nice_range(double& lo, double& hi) {
  if (!(hi > lo)) {
    const double pad = lo == 0.0 ? 1.0 : 0.1 * std::abs(lo);
    lo -= pad;
    hi += pad;
  }
  const double step = tick_step(lo, hi);
  lo = std::floor(lo / step + 1e-9) * step;
  hi = std::ceil(hi / step - 1e-9) * step;
}

}  // namespace detail

/// Writes `plot` to `path` (throws std::runtime_error if the file cannot be written).
inline void write(const std::string& path, const Plot& plot) {
  using detail::num;
  constexpr double W = 720, H = 480, left = 80, right = 30, top = 50, bottom = 60;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const Series& s : plot.series) {
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]), y1 = std::max(y1, s.y[i]);
    }
  }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (!(x1 > x0)) detail::nice_range(x0, x1);  // x: the data's range; y: from 0, to whole ticks
  y0 = std::min(y0, 0.0);
  detail::nice_range(y0, y1);
  const double pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + (y1 - y) / (y1 - y0) * ph; };

  std::ofstream out(path);
  if (!out) throw std::runtime_error("svg::write: cannot open " + path);
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
      << "' font-family='sans-serif' font-size='13'>\n<rect width='100%' height='100%' fill='white'/>\n";
  out << "<text x='" << W / 2 << "' y='28' text-anchor='middle' font-size='16'>" << detail::escape(plot.title)
      << "</text>\n";
  // Ticks, grid lines and tick labels.
  const double xs = detail::tick_step(x0, x1), ys = detail::tick_step(y0, y1);
  for (double t = std::ceil(x0 / xs - 1e-9) * xs; t <= x1 + 1e-9 * xs; t += xs) {
    const double v = std::abs(t) < 1e-12 * xs ? 0.0 : t;
    out << "<line x1='" << px(v) << "' y1='" << top << "' x2='" << px(v) << "' y2='" << top + ph
        << "' stroke='#e4e4e4'/>\n<text x='" << px(v) << "' y='" << top + ph + 20
        << "' text-anchor='middle'>" << num(v) << "</text>\n";
  }
  for (double t = std::ceil(y0 / ys - 1e-9) * ys; t <= y1 + 1e-9 * ys; t += ys) {
    const double v = std::abs(t) < 1e-12 * ys ? 0.0 : t;
    out << "<line x1='" << left << "' y1='" << py(v) << "' x2='" << left + pw << "' y2='" << py(v)
        << "' stroke='#e4e4e4'/>\n<text x='" << left - 8 << "' y='" << py(v) + 4
        << "' text-anchor='end'>" << num(v) << "</text>\n";
  }
  out << "<rect x='" << left << "' y='" << top << "' width='" << pw << "' height='" << ph
      << "' fill='none' stroke='black'/>\n";
  out << "<text x='" << left + pw / 2 << "' y='" << H - 15 << "' text-anchor='middle'>"
      << detail::escape(plot.xlabel) << "</text>\n";
  out << "<text transform='translate(22," << top + ph / 2 << ") rotate(-90)' text-anchor='middle'>"
      << detail::escape(plot.ylabel) << "</text>\n";
  for (const VLine& v : plot.vlines) {
    if (v.x < x0 || v.x > x1) continue;
    out << "<line x1='" << px(v.x) << "' y1='" << top << "' x2='" << px(v.x) << "' y2='" << top + ph
        << "' stroke='gray' stroke-dasharray='5,4'/>\n<text x='" << px(v.x) + 4 << "' y='" << top + 14
        << "' fill='gray'>" << detail::escape(v.label) << "</text>\n";
  }
  // Data, clipped to the plot area.
  out << "<clipPath id='area'><rect x='" << left << "' y='" << top << "' width='" << pw << "' height='" << ph
      << "'/></clipPath>\n<g clip-path='url(#area)'>\n";
  for (const Series& s : plot.series) {
    std::string points;
    auto flush = [&] {
      if (!points.empty()) {
        out << "<polyline fill='none' stroke='" << s.color << "' stroke-width='1.8' points='" << points << "'/>\n";
      }
      points.clear();
    };
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        flush();
        continue;
      }
      if (s.markers) {
        out << "<circle cx='" << px(s.x[i]) << "' cy='" << py(s.y[i]) << "' r='3.5' fill='none' stroke='"
            << s.color << "' stroke-width='1.5'/>\n";
      } else {
        points += num(px(s.x[i])) + "," + num(py(s.y[i])) + " ";
      }
    }
    flush();
  }
  out << "</g>\n";
  // Legend, top right.
  double ly = top + 20;
  for (const Series& s : plot.series) {
    const double lx = left + pw - 230;
    if (s.markers) {
      out << "<circle cx='" << lx + 12 << "' cy='" << ly - 4 << "' r='3.5' fill='none' stroke='" << s.color
          << "' stroke-width='1.5'/>\n";
    } else {
      out << "<line x1='" << lx << "' y1='" << ly - 4 << "' x2='" << lx + 24 << "' y2='" << ly - 4
          << "' stroke='" << s.color << "' stroke-width='1.8'/>\n";
    }
    out << "<text x='" << lx + 32 << "' y='" << ly << "'>" << detail::escape(s.name) << "</text>\n";
    ly += 20;
  }
  out << "</svg>\n";
  if (!out) throw std::runtime_error("svg::write: cannot write " + path);
}

}  // namespace svg
