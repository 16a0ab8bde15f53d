#include "injector/resources.h"

#include <cctype>
#include <string>

#include "injector/networks.h"
#include "json/fields.h"

namespace hcashare::injector {

using jsonin::Quote;

namespace {

// Digits of a mantissa beyond this (leading and trailing zeros aside) are refused.
constexpr size_t kMaxMantissaDigits = 19;
// Decimal exponents beyond this magnitude are refused.
constexpr int kMaxExponent = 40;

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The qualified-name part after '/': ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Status NotWhole(std::string_view text, const std::string& why) {
  return Status::InvalidArgument("quantity " + Quote(std::string(text)) + " " + why);
}

// Decimal exponent of a decimal-SI suffix, or false when `suffix` is none.
bool DecimalSuffix(std::string_view suffix, int* exponent) {
  static const struct {
    const char* text;
    int exponent;
  } kSuffixes[] = {{"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
                   {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  for (const auto& s : kSuffixes) {
    if (suffix == s.text) {
      *exponent = s.exponent;
      return true;
    }
  }
  return false;
}

// Power of two of a binary-SI suffix (Ki = 10 ... Ei = 60), or false.
bool BinarySuffix(std::string_view suffix, int* bits) {
  static const char kLetters[] = "KMGTPE";
  if (suffix.size() != 2 || suffix[1] != 'i') return false;
  for (int i = 0; kLetters[i] != '\0'; ++i) {
    if (suffix[0] == kLetters[i]) {
      *bits = 10 * (i + 1);
      return true;
    }
  }
  return false;
}

}  // namespace

Status CheckExtendedResourceName(std::string_view name) {
  const std::string quoted = Quote(std::string(name));
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgument(
        "resource name " + quoted +
        " has no domain: an extended resource is named domain/name (e.g. example.com/rdma)");
  }
  if (name.find("kubernetes.io/") != std::string_view::npos) {
    return Status::InvalidArgument("resource name " + quoted +
                                   " is in the kubernetes.io domain, which Kubernetes keeps "
                                   "for its own resources: use a domain of your own");
  }
  if (name.rfind("requests.", 0) == 0) {
    return Status::InvalidArgument("resource name " + quoted +
                                   " starts with \"requests.\", which Kubernetes keeps for "
                                   "quota names: drop the prefix");
  }
  const std::string_view domain = name.substr(0, slash);
  const std::string_view part = name.substr(slash + 1);
  // Kubernetes checks "requests.<name>" as a qualified name, so the domain gets 9 fewer bytes.
  if (!IsDns1123Subdomain(domain) || domain.size() > 253 - 9) {
    return Status::InvalidArgument(
        "resource name " + quoted + ": domain " + Quote(std::string(domain)) +
        " is not a DNS-1123 subdomain of at most 244 characters (lower-case letters, digits, "
        "'-' and '.')");
  }
  if (!IsQualifiedNamePart(part)) {
    return Status::InvalidArgument(
        "resource name " + quoted + ": name " + Quote(std::string(part)) +
        " must be 1 to 63 of letters, digits, '-', '_' and '.', starting and ending with a "
        "letter or digit, and hold no further '/'");
  }
  return Status::Ok();
}

Result<int64_t> ParseWholeQuantity(const nlohmann::json& value) {
  if (value.is_string())
    return ParseWholeQuantity(std::string_view(value.get_ref<const std::string&>()));
  if (value.is_number()) return ParseWholeQuantity(std::string_view(value.dump()));
  return Status::InvalidArgument("quantity is " + jsonin::DescribeValue(value) +
                                 ", not a string such as \"2\"");
}

Result<int64_t> ParseWholeQuantity(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  // Mantissa: digits [. digits], at least one digit.
  std::string digits;
  int scale = 0;  // value = digits * 10^scale
  size_t i = 0;
  bool any_digit = false;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, any_digit = true) {
    digits += s[i];
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      digits += s[i];
      --scale;
      any_digit = true;
    }
  }
  if (!any_digit) return NotWhole(text, "is not a number (write a whole number such as \"2\")");
  const std::string_view suffix = s.substr(i);
  int exponent = 0;
  int bits = 0;
  if (!DecimalSuffix(suffix, &exponent) && !BinarySuffix(suffix, &bits)) {
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) {
      return NotWhole(text, "has an unknown suffix " + Quote(std::string(suffix)));
    }
    std::string_view e = suffix.substr(1);
    bool e_negative = false;
    if (e.front() == '+' || e.front() == '-') {
      e_negative = e.front() == '-';
      e.remove_prefix(1);
    }
    if (e.empty() || e.size() > 3) return NotWhole(text, "has a bad exponent");
    for (char c : e) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return NotWhole(text, "has a bad exponent");
      exponent = exponent * 10 + (c - '0');
    }
    if (exponent > kMaxExponent) return NotWhole(text, "is out of range");
    if (e_negative) exponent = -exponent;
  }
  scale += exponent;
  // Leading zeros carry nothing; trailing zeros move into the scale.
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return int64_t{0};
  digits.erase(0, first);
  while (digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  if (negative) return NotWhole(text, "is negative; resource quantities are 0 or more");
  if (digits.size() > kMaxMantissaDigits) return NotWhole(text, "has too many digits");
  using u128 = unsigned __int128;
  u128 value = std::stoull(digits);
  value <<= bits;  // < 10^19 * 2^60 < 2^124
  const u128 kMax = static_cast<u128>(INT64_MAX);
  if (scale < 0) {
    // 10^-scale must divide digits * 2^bits, whose decimal form ends in no zero unless bits > 0.
    u128 divisor = 1;
    for (int k = 0; k < -scale; ++k) {
      if (divisor > value)
        return NotWhole(text,
                        "is not a whole number; extended resources are counted in whole units");
      divisor *= 10;
    }
    if (value % divisor != 0) {
      return NotWhole(text, "is not a whole number; extended resources are counted in whole units");
    }
    value /= divisor;
  } else {
    for (int k = 0; k < scale; ++k) {
      value *= 10;
      if (value > kMax) break;
    }
  }
  if (value > kMax) return NotWhole(text, "is larger than " + std::to_string(INT64_MAX));
  return static_cast<int64_t>(value);
}

}  // namespace hcashare::injector
