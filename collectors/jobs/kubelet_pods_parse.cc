#include "collectors/jobs/kubelet_pods_parse.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/value_parse.h"

namespace fabricwatch::jobs {
namespace {

using Json = nlohmann::json;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The fields of the item being read; each is nullopt until seen, and `bad` once any of them, or
// the item's shape, is wrong.
struct ItemFields {
  bool has_metadata = false;
  bool bad = false;
  std::optional<std::string> uid, name, pod_namespace;
};

// Reads the top-level object's "kind" and "items", each item's "metadata" object and that
// object's "uid", "name" and "namespace"; everything else passes through unread. Depths: 1 the
// list, 2 the items array, 3 an item, 4 its metadata.
class PodListReader final : public nlohmann::json_sax<Json> {
 public:
  explicit PodListReader(const std::set<std::string, std::less<>>* wanted) : wanted_(wanted) {}

  bool null() override { return Scalar(nullptr, /*is_null=*/true); }
  bool boolean(bool) override { return Scalar(nullptr); }
  bool number_integer(number_integer_t) override { return Scalar(nullptr); }
  bool number_unsigned(number_unsigned_t) override { return Scalar(nullptr); }
  bool number_float(number_float_t, const string_t&) override { return Scalar(nullptr); }
  bool string(string_t& value) override { return Scalar(&value); }
  bool binary(binary_t&) override { return Scalar(nullptr); }

  bool start_object(std::size_t) override {
    if (depth_ == 0) {
      top_is_object_ = true;
    } else if (depth_ == 2 && in_items_) {
      item_ = ItemFields{};
    } else if (depth_ == 3 && item_ && key_ == "metadata") {
      item_->has_metadata = true;
      in_metadata_ = true;
    } else if (IsItemField()) {
      item_->bad = true;  // {"uid": {...}}
    }
    return Open();
  }
  bool end_object() override {
    --depth_;
    if (depth_ == 3) in_metadata_ = false;
    if (depth_ == 2 && item_) FinishItem();
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 1 && key_ == "items") {
      in_items_ = true;
      saw_items_ = true;
    } else {
      OddContainer();
    }
    return Open();
  }
  bool end_array() override {
    --depth_;
    if (depth_ == 1) in_items_ = false;
    return true;
  }
  bool key(string_t& value) override {
    // Only the keys of depths 1 (the list), 3 (an item) and 4 (its metadata) matter.
    if (depth_ == 1 || depth_ == 3 || (depth_ == 4 && in_metadata_)) key_ = value;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception&) override {
    // The token may be hostile and as long as the body: only a bounded, escaped part is kept.
    error_ = "not JSON at byte " + std::to_string(position) + " (near " +
             QuoteForMessage(last_token, 32) + ")";
    return false;
  }

  const std::string& error() const { return error_; }
  bool is_pod_list() const { return top_is_object_ && kind_ == "PodList"; }
  bool items_ok() const { return items_null_ || saw_items_; }
  PodList Take() { return std::move(list_); }

 private:
  bool Open() {
    ++depth_;
    return true;
  }

  // A container where a scalar field belongs: the metadata of an item that is not an object, a
  // uid that is an array, an item that is an array.
  void OddContainer() {
    if (depth_ == 2 && in_items_) {
      ++list_.items;
      ++list_.skipped;
    } else if (depth_ == 3 && item_ && key_ == "metadata") {
      item_->bad = true;
    } else if (IsItemField()) {
      item_->bad = true;
    }
  }

  // At a value of the metadata's uid, name or namespace.
  bool IsItemField() const {
    return depth_ == 4 && item_ && in_metadata_ &&
           (key_ == "uid" || key_ == "name" || key_ == "namespace");
  }

  bool Scalar(string_t* text, bool is_null = false) {
    if (depth_ == 1) {
      if (key_ == "kind" && text) kind_ = *text;
      if (key_ == "items" && is_null) items_null_ = true;  // a nil Go slice: no pods
    } else if (depth_ == 2 && in_items_) {
      ++list_.items;  // an item that is not an object
      ++list_.skipped;
    } else if (depth_ == 3 && item_ && key_ == "metadata") {
      item_->bad = true;
    } else if (IsItemField()) {
      if (!text) {
        item_->bad = true;
      } else if (key_ == "uid") {
        item_->uid = std::move(*text);
      } else if (key_ == "name") {
        item_->name = std::move(*text);
      } else {
        item_->pod_namespace = std::move(*text);
      }
    }
    return true;
  }

  void FinishItem() {
    ItemFields item = std::move(*item_);
    item_.reset();
    ++list_.items;
    if (item.bad || !item.has_metadata || !item.uid || !item.name || !item.pod_namespace ||
        !IsPodUid(*item.uid) || !IsDns1123Subdomain(*item.name) ||
        !IsDns1123Label(*item.pod_namespace)) {
      ++list_.skipped;
      return;
    }
    if (wanted_ && !wanted_->contains(*item.uid)) return;
    list_.by_uid.try_emplace(std::move(*item.uid),
                             PodName{std::move(*item.pod_namespace), std::move(*item.name)});
  }

  const std::set<std::string, std::less<>>* wanted_;
  PodList list_;
  size_t depth_ = 0;
  std::string key_;  // the last key read at depth 1, 3 or 4
  std::string kind_;
  std::string error_;
  std::optional<ItemFields> item_;
  bool top_is_object_ = false;
  bool in_items_ = false;
  bool saw_items_ = false;
  bool items_null_ = false;
  bool in_metadata_ = false;
};

}  // namespace

bool IsPodUid(std::string_view uid) {
  // A UUID (RFC 4122 text form), or the 32 hex digits of a static pod's UID (kubelet
  // pkg/kubelet/config/common.go, an MD5 of the manifest).
  if (uid.size() == 32) return std::all_of(uid.begin(), uid.end(), IsHex);
  if (uid.size() != 36) return false;
  for (size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : !IsHex(uid[i])) return false;
  }
  return true;
}

bool IsDns1123Label(std::string_view name) {
  // apimachinery pkg/util/validation/validation.go IsDNS1123Label: [a-z0-9]([-a-z0-9]*[a-z0-9])?,
  // at most 63 characters.
  if (name.empty() || name.size() > 63) return false;
  if (!IsLowerAlnum(name.front()) || !IsLowerAlnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsDns1123Subdomain(std::string_view name) {
  // apimachinery IsDNS1123Subdomain: DNS-1123 labels joined by '.', at most 253 characters (the
  // rule of a pod's name, ValidatePodName in pkg/apis/core/validation).
  if (name.empty() || name.size() > 253) return false;
  while (true) {
    const size_t dot = name.find('.');
    if (!IsDns1123Label(name.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    name.remove_prefix(dot + 1);
  }
}

Result<PodList> ParsePodList(std::string_view body,
                             const std::set<std::string, std::less<>>* wanted) {
  if (body.size() > kMaxPodListBytes) {
    return Error(StatusCode::kInvalidArgument,
                 "kubelet pod list of " + std::to_string(body.size()) + " bytes is over the " +
                     std::to_string(kMaxPodListBytes) + "-byte bound");
  }
  PodListReader reader(wanted);
  if (!Json::sax_parse(body.begin(), body.end(), &reader)) {
    return Error(StatusCode::kInvalidArgument, "kubelet pod list: " + reader.error());
  }
  if (!reader.is_pod_list()) {
    return Error(StatusCode::kInvalidArgument,
                 "kubelet pod list: not an object with \"kind\":\"PodList\"");
  }
  if (!reader.items_ok()) {
    return Error(StatusCode::kInvalidArgument, "kubelet pod list: no \"items\" array");
  }
  return reader.Take();
}

}  // namespace fabricwatch::jobs
