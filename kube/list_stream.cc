#include "kube/list_stream.h"

namespace hcashare::kube {

ListSplitter::ListSplitter(size_t max_item_bytes,
                           std::function<Status(std::string_view item)> on_item)
    : max_item_bytes_(max_item_bytes), on_item_(std::move(on_item)) {}

Status ListSplitter::Feed(std::string_view bytes) {
  if (!error_.ok()) return error_;
  for (const char c : bytes) {
    error_ = Step(c);
    if (!error_.ok()) return error_;
  }
  return Status::Ok();
}

bool ListSplitter::InString(char c) {
  if (!in_string_) return false;
  if (escape_) {
    escape_ = false;
  } else if (c == '\\') {
    escape_ = true;
  } else if (c == '"') {
    in_string_ = false;
  }
  return true;
}

Status ListSplitter::Step(char c) {
  const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
  if (in_item_) {
    if (item_.size() >= max_item_bytes_) {
      return Status::FailedPrecondition("a list item is larger than " +
                                        std::to_string(max_item_bytes_) + " bytes");
    }
    item_.push_back(c);
    if (InString(c)) return Status::Ok();
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 2) {
        // Brackets inside are checked when the item is parsed; its own must be an object's.
        if (c != '}') return Status::InvalidArgument("a list item is not a JSON object");
        in_item_ = false;
        Status st = on_item_(item_);
        item_.clear();
        item_.shrink_to_fit();  // one item's memory, never the largest one's for the page
        return st;
      }
    }
    return Status::Ok();
  }
  if (in_items_ && depth_ == 2 && !in_string_) {
    if (space || c == ',') return Status::Ok();
    if (c == '{') {
      in_item_ = true;
      ++depth_;
      item_.push_back(c);
      return Status::Ok();
    }
    if (c != ']') return Status::InvalidArgument("a list item is not a JSON object");
    in_items_ = false;
  }
  if (skeleton_.size() >= kMaxSkeletonBytes) {
    return Status::FailedPrecondition("the list's own members exceed " +
                                      std::to_string(kMaxSkeletonBytes) + " bytes");
  }
  if (skeleton_.empty() && !space && c != '{') {
    return Status::InvalidArgument("the answer is not a JSON object");
  }
  skeleton_.push_back(c);
  if (InString(c)) {
    if (!in_string_ && depth_ == 1) {
      last_string_ = string_;
    } else if (in_string_ && depth_ == 1 && string_.size() < 16) {
      string_.push_back(c);
    }
    return Status::Ok();
  }
  switch (c) {
    case '"':
      in_string_ = true;
      string_.clear();
      break;
    case ':':
      if (depth_ == 1) key_ = last_string_;
      break;
    case ',':
      if (depth_ == 1) key_.clear();
      break;
    case '[':
      if (depth_ == 1 && key_ == "items") in_items_ = true;
      ++depth_;
      break;
    case '{':
      ++depth_;
      break;
    case '}':
    case ']':
      --depth_;
      break;
    default:
      break;
  }
  return Status::Ok();
}

Result<nlohmann::json> ListSplitter::Finish() {
  if (!error_.ok()) return error_;
  if (depth_ != 0 || in_string_ || in_item_) {
    return Status::InvalidArgument("the answer ended inside the list");
  }
  nlohmann::json out = nlohmann::json::parse(skeleton_, nullptr, /*allow_exceptions=*/false);
  if (!out.is_object()) return Status::InvalidArgument("the answer is not a JSON object");
  return out;
}

}  // namespace hcashare::kube
