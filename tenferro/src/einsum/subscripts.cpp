// einsum's subscript parser: text and operand shapes in, one label per axis out
// (tenferro/einsum.hpp states the grammar). Every error names the position in the text, or the
// letter, operands and axes involved.
#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "tenferro/einsum.hpp"

namespace tenferro::tn {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// One term: its letters with their text positions, and where its ellipsis is (if any).
struct Term {
  std::vector<char> letters;
  std::vector<std::size_t> positions;
  std::optional<std::size_t> ellipsis;  // index into letters before which the ellipsis stands
  std::size_t start = 0;                // text position of the term
};

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

[[noreturn]] void malformed(std::string_view text, std::size_t pos, const std::string& what) {
  throw ValueError("einsum: " + what + " at position " + std::to_string(pos) + " of subscripts " +
                   quoted(text));
}

/// Splits the text into input terms and the optional output term.
std::pair<std::vector<Term>, std::optional<Term>> split_terms(std::string_view text) {
  std::vector<Term> inputs(1);
  std::optional<Term> output;
  Term* current = &inputs.back();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (is_letter(c)) {
      current->letters.push_back(c);
      current->positions.push_back(i);
    } else if (c == ',') {
      if (output) malformed(text, i, "',' after '->' (the output is one term)");
      inputs.emplace_back();
      inputs.back().start = i + 1;
      current = &inputs.back();
    } else if (c == '-') {
      if (i + 1 >= text.size() || text[i + 1] != '>') malformed(text, i, "'-' not followed by '>'");
      if (output) malformed(text, i, "a second '->'");
      output.emplace();
      output->start = i + 2;
      current = &*output;
      ++i;
    } else if (c == '.') {
      if (text.substr(i, 3) != "...") malformed(text, i, "a '.' that does not start '...'");
      if (current->ellipsis) malformed(text, i, "a second '...' in one term");
      current->ellipsis = current->letters.size();
      i += 2;
    } else {
      malformed(text, i, std::string("invalid character '") + c + "' (expected letters a-z, A-Z, ',', '->' or '...')");
    }
  }
  return {std::move(inputs), std::move(output)};
}

/// Sets s.size from the operands' shapes: a label's length is the one its axes share, length-1
/// axes broadcasting; ShapeError naming the label, both operands and axes otherwise.
void fix_sizes(Subscripts& s, std::span<const Shape> shapes, const std::string& where) {
  s.size.assign(s.names.size(), 1);
  std::vector<std::pair<std::size_t, std::size_t>> first_seen(s.names.size());  // (operand, axis) fixing each size
  for (std::size_t k = 0; k < s.inputs.size(); ++k) {
    for (std::size_t a = 0; a < s.inputs[k].size(); ++a) {
      const auto label = static_cast<std::size_t>(s.inputs[k][a]);
      const std::int64_t length = shapes[k][a];
      std::int64_t& size = s.size[label];
      if (size == length || length == 1) continue;
      if (size == 1) {
        size = length;
        first_seen[label] = {k, a};
        continue;
      }
      throw ShapeError("einsum: " + s.names[label] + " has length " + std::to_string(size) + " in operand " +
                       std::to_string(first_seen[label].first) + " (axis " + std::to_string(first_seen[label].second) +
                       ") and " + std::to_string(length) + " in operand " + std::to_string(k) + " (axis " +
                       std::to_string(a) + ")" + where + "; expected equal lengths or 1");
    }
  }
}

}  // namespace

Subscripts from_labels(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
                       std::span<const Shape> shapes) {
  if (inputs.size() != shapes.size()) {
    throw ShapeError("einsum: the label lists name " + std::to_string(inputs.size()) + " operand(s); " +
                     std::to_string(shapes.size()) + " given");
  }
  Subscripts s;
  std::map<int, Label> dense;
  auto label_of = [&](int user) {
    auto [it, fresh] = dense.emplace(user, static_cast<Label>(s.names.size()));
    if (fresh) s.names.push_back("label " + std::to_string(user));
    return it->second;
  };
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].size() != shapes[k].size()) {
      throw ShapeError("einsum: operand " + std::to_string(k) + " has shape " + shape_to_string(shapes[k]) +
                       " but its label list names " + std::to_string(inputs[k].size()) + " axes");
    }
    std::vector<Label> axes;
    for (int user : inputs[k]) {
      if (user < 0) throw ValueError("einsum: label " + std::to_string(user) + " of operand " + std::to_string(k) + " is negative; expected labels >= 0");
      axes.push_back(label_of(user));
    }
    s.inputs.push_back(std::move(axes));
  }
  std::vector<bool> used(s.names.size(), false);
  for (std::size_t j = 0; j < output.size(); ++j) {
    auto it = dense.find(output[j]);
    if (it == dense.end()) {
      throw ValueError("einsum: output label " + std::to_string(output[j]) + " (position " + std::to_string(j) +
                       ") appears in no input");
    }
    if (used[static_cast<std::size_t>(it->second)]) {
      throw ValueError("einsum: output label " + std::to_string(output[j]) + " repeated (position " + std::to_string(j) + ")");
    }
    used[static_cast<std::size_t>(it->second)] = true;
    s.output.push_back(it->second);
  }
  fix_sizes(s, shapes, "");
  return s;
}

Subscripts parse(std::string_view text, std::span<const Shape> shapes) {
  auto [terms, output_term] = split_terms(text);
  if (terms.size() != shapes.size()) {
    throw ShapeError("einsum: subscripts " + quoted(text) + " name " + std::to_string(terms.size()) +
                     " operand(s); " + std::to_string(shapes.size()) + " given");
  }
  // The ellipsis axes of each operand: its rank beyond its letters.
  std::size_t ellipsis_rank = 0;
  std::vector<std::size_t> operand_ellipsis(terms.size(), 0);
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    const std::size_t rank = shapes[k].size();
    const bool fits = t.ellipsis ? rank >= t.letters.size() : rank == t.letters.size();
    if (!fits) {
      throw ShapeError("einsum: operand " + std::to_string(k) + " has shape " + shape_to_string(shapes[k]) +
                       " (rank " + std::to_string(rank) + ") but its subscripts at position " +
                       std::to_string(t.start) + " of " + quoted(text) + " name " +
                       std::to_string(t.letters.size()) + " axes" + (t.ellipsis ? " plus '...'" : ""));
    }
    if (t.ellipsis) operand_ellipsis[k] = rank - t.letters.size();
    ellipsis_rank = std::max(ellipsis_rank, operand_ellipsis[k]);
  }

  Subscripts s;
  std::array<Label, 128> letter_label;
  letter_label.fill(-1);
  auto new_label = [&](char name) {
    s.names.push_back(name == '.' ? std::string("an ellipsis axis") : std::string("index '") + name + "'");
    return static_cast<Label>(s.names.size() - 1);
  };
  for (const Term& t : terms) {
    for (char c : t.letters) {
      if (letter_label[static_cast<unsigned char>(c)] < 0) letter_label[static_cast<unsigned char>(c)] = new_label(c);
    }
  }
  std::vector<Label> ellipsis_labels(ellipsis_rank);
  for (auto& l : ellipsis_labels) l = new_label('.');

  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    std::vector<Label> axes;
    for (std::size_t j = 0; j <= t.letters.size(); ++j) {
      if (t.ellipsis && *t.ellipsis == j) {
        // This operand's ellipsis axes are the last ones of the common ellipsis (right-aligned).
        for (std::size_t e = ellipsis_rank - operand_ellipsis[k]; e < ellipsis_rank; ++e) {
          axes.push_back(ellipsis_labels[e]);
        }
      }
      if (j < t.letters.size()) axes.push_back(letter_label[static_cast<unsigned char>(t.letters[j])]);
    }
    s.inputs.push_back(std::move(axes));
  }
  fix_sizes(s, shapes, " of " + quoted(text));

  if (output_term) {
    std::array<bool, 128> used{};
    for (std::size_t j = 0; j <= output_term->letters.size(); ++j) {
      if (output_term->ellipsis && *output_term->ellipsis == j) {
        s.output.insert(s.output.end(), ellipsis_labels.begin(), ellipsis_labels.end());
      }
      if (j == output_term->letters.size()) break;
      const char c = output_term->letters[j];
      const std::size_t pos = output_term->positions[j];
      if (used[static_cast<unsigned char>(c)]) malformed(text, pos, std::string("output index '") + c + "' repeated");
      used[static_cast<unsigned char>(c)] = true;
      const Label label = letter_label[static_cast<unsigned char>(c)];
      if (label < 0) malformed(text, pos, std::string("output index '") + c + "' that appears in no input");
      s.output.push_back(label);
    }
  } else {
    // Implicit output: ellipsis axes, then the letters that occur exactly once, alphabetically.
    s.output = ellipsis_labels;
    std::array<int, 128> count{};
    for (const Term& t : terms) {
      for (char c : t.letters) ++count[static_cast<unsigned char>(c)];
    }
    for (int c = 0; c < 128; ++c) {
      if (count[static_cast<std::size_t>(c)] == 1) s.output.push_back(letter_label[static_cast<std::size_t>(c)]);
    }
  }
  return s;
}

}  // namespace tenferro::tn
