// ParsePodList (collectors/jobs/kubelet_pods_parse.h): the kubelet's GET /pods answer, a
// v1.PodList, read for each pod's uid, name and namespace. The items below follow the shape the
// kubelet encodes (kubelet pkg/kubelet/server/server.go encodePods; field names from the core/v1
// API reference): an API pod with an owner reference whose own `uid` must not be taken for the
// pod's, labels with a `name` key, a static pod with a 32-hex UID, and spec/status nested deeper
// than the metadata.

#include "collectors/jobs/kubelet_pods_parse.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

namespace fabricwatch::jobs {
namespace {

constexpr char kTrainerUid[] = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
constexpr char kStaticUid[] = "8e9c8ee2b0c7c5a42cbd4b14f0b33bbd";

// One pod in the kubelet's encoding, abridged but with every level a real one has.
std::string Pod(const std::string& uid, const std::string& name, const std::string& ns) {
  return R"({"metadata":{"name":")" + name + R"(","generateName":"trainer-","namespace":")" + ns +
         R"(","uid":")" + uid +
         R"(","resourceVersion":"550088","creationTimestamp":"2026-11-20T09:36:45Z",)"
         R"("labels":{"name":"not-the-pod","app":"trainer"},)"
         R"("annotations":{"kubernetes.io/config.seen":"2026-11-20T09:36:45.1Z"},)"
         R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"trainer",)"
         R"("uid":"22a5a8be-7cee-42cd-a6c3-02b620f4ce88","controller":true}]},)"
         R"("spec":{"containers":[{"name":"main","image":"nccl-tests:2.13",)"
         R"("resources":{"limits":{"rdma/hca":"1"}},"volumeMounts":[{"name":"kube-api-access",)"
         R"("mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}]}],)"
         R"("nodeName":"gpu-a17","priority":0,"hostNetwork":false},)"
         R"("status":{"phase":"Running","podIP":"10.244.3.17","containerStatuses":[{"name":"main",)"
         R"("ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-11-20T09:36:50Z"}}}]}})";
}

std::string List(const std::string& items) {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)" + items + "]}";
}

TEST(ParsePodList, reads_the_name_and_namespace_of_each_pod) {
  const std::string body = List(Pod(kTrainerUid, "trainer-0", "ml") + "," +
                                Pod(kStaticUid, "etcd-gpu-a17", "kube-system"));
  auto list = ParsePodList(body);
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->items, 2u);
  EXPECT_EQ(list->skipped, 0u);
  ASSERT_EQ(list->by_uid.size(), 2u);
  EXPECT_EQ(list->by_uid.at(kTrainerUid), (PodName{"ml", "trainer-0"}));
  EXPECT_EQ(list->by_uid.at(kStaticUid), (PodName{"kube-system", "etcd-gpu-a17"}));
}

TEST(ParsePodList, keeps_only_the_wanted_uids) {
  const std::string body = List(Pod(kTrainerUid, "trainer-0", "ml") + "," +
                                Pod(kStaticUid, "etcd-gpu-a17", "kube-system"));
  const std::set<std::string, std::less<>> wanted = {kStaticUid, "not-on-this-node"};
  auto list = ParsePodList(body, &wanted);
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->items, 2u);
  ASSERT_EQ(list->by_uid.size(), 1u);
  EXPECT_EQ(list->by_uid.begin()->first, kStaticUid);
}

TEST(ParsePodList, a_kubelet_with_no_pods_answers_null_items) {
  // A nil Go slice encodes as null.
  auto list = ParsePodList(R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":null})");
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->items, 0u);
  EXPECT_TRUE(list->by_uid.empty());
  EXPECT_TRUE(ParsePodList(List("")));
}

struct BadItemCase {
  const char* name;
  std::string item;
};

class BadItemTest : public ::testing::TestWithParam<BadItemCase> {};

TEST_P(BadItemTest, is_skipped_and_counted_and_the_others_are_kept) {
  const std::string body = List(GetParam().item + "," + Pod(kTrainerUid, "trainer-0", "ml"));
  auto list = ParsePodList(body);
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->items, 2u);
  EXPECT_EQ(list->skipped, 1u);
  ASSERT_EQ(list->by_uid.size(), 1u);
  EXPECT_EQ(list->by_uid.at(kTrainerUid), (PodName{"ml", "trainer-0"}));
}

const std::string kUid2 = "2c5f39cb-3fb2-42e3-994f-1127e4ddb538";

INSTANTIATE_TEST_SUITE_P(
    Items, BadItemTest,
    ::testing::Values(
        BadItemCase{"no_metadata", R"({"spec":{}})"},
        BadItemCase{"metadata_null", R"({"metadata":null})"},
        BadItemCase{"metadata_array", R"({"metadata":[]})"},
        BadItemCase{"no_uid", R"({"metadata":{"name":"a","namespace":"b"}})"},
        BadItemCase{"no_name", R"({"metadata":{"uid":")" + kUid2 + R"(","namespace":"b"}})"},
        BadItemCase{"no_namespace", R"({"metadata":{"uid":")" + kUid2 + R"(","name":"a"}})"},
        BadItemCase{"uid_number", R"({"metadata":{"uid":12345,"name":"a","namespace":"b"}})"},
        BadItemCase{"name_object",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":{"x":1},"namespace":"b"}})"},
        BadItemCase{"namespace_array",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":"a","namespace":["b"]}})"},
        BadItemCase{"name_null",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":null,"namespace":"b"}})"},
        BadItemCase{"uid_not_a_uuid",
                    R"({"metadata":{"uid":"../../etc","name":"a","namespace":"b"}})"},
        BadItemCase{"name_with_slash",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":"a/b","namespace":"b"}})"},
        BadItemCase{"name_upper_case",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":"Trainer","namespace":"b"}})"},
        BadItemCase{"name_with_newline_and_quote",
                    R"({"metadata":{"uid":")" + kUid2 +
                        R"(","name":"a\n\"} 1\nevil{x=\"","namespace":"b"}})"},
        BadItemCase{"name_with_nul",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":"a\u0000b","namespace":"b"}})"},
        BadItemCase{"name_non_ascii", R"({"metadata":{"uid":")" + kUid2 +
                                          R"(","name":"tr\u00e4iner","namespace":"b"}})"},
        BadItemCase{"name_too_long", R"({"metadata":{"uid":")" + kUid2 + R"(","name":")" +
                                         std::string(254, 'a') + R"(","namespace":"b"}})"},
        BadItemCase{"namespace_with_dot",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":"a","namespace":"b.c"}})"},
        BadItemCase{"namespace_too_long", R"({"metadata":{"uid":")" + kUid2 +
                                              R"(","name":"a","namespace":")" +
                                              std::string(64, 'b') + R"("}})"},
        BadItemCase{"empty_name",
                    R"({"metadata":{"uid":")" + kUid2 + R"(","name":"","namespace":"b"}})"},
        BadItemCase{"item_string", R"("pod")"}, BadItemCase{"item_number", "42"},
        BadItemCase{"item_null", "null"}, BadItemCase{"item_array", R"([{"metadata":{}}])"}),
    [](const ::testing::TestParamInfo<BadItemCase>& info) { return info.param.name; });

TEST(ParsePodList, fields_outside_the_metadata_are_not_the_pods) {
  // `uid` and `name` of an owner reference, of labels and of the spec: none is the pod's.
  const std::string item = R"({"spec":{"uid":")" + kUid2 +
                           R"(","name":"x","namespace":"y"},)"
                           R"("metadata":{"labels":{"uid":")" +
                           kUid2 + R"(","name":"x","namespace":"y"}}})";
  auto list = ParsePodList(List(item));
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->skipped, 1u);
  EXPECT_TRUE(list->by_uid.empty());
}

struct BadBodyCase {
  const char* name;
  std::string body;
};

class BadBodyTest : public ::testing::TestWithParam<BadBodyCase> {};

TEST_P(BadBodyTest, is_an_error_with_a_bounded_message) {
  auto list = ParsePodList(GetParam().body);
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().code(), StatusCode::kInvalidArgument);
  EXPECT_LT(list.error().message().size(), 200u) << list.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, BadBodyTest,
    ::testing::Values(
        BadBodyCase{"empty", ""}, BadBodyCase{"html", "<html>404 page not found</html>"},
        BadBodyCase{"truncated", List(Pod(kTrainerUid, "trainer-0", "ml")).substr(0, 300)},
        BadBodyCase{"trailing_garbage", List("") + "x"}, BadBodyCase{"array", "[]"},
        BadBodyCase{"another_kind", R"({"kind":"Status","status":"Failure","code":401})"},
        BadBodyCase{"no_kind", R"({"items":[]})"},
        BadBodyCase{"no_items", R"({"kind":"PodList","apiVersion":"v1","metadata":{}})"},
        BadBodyCase{"items_object", R"({"kind":"PodList","items":{}})"},
        BadBodyCase{"items_number", R"({"kind":"PodList","items":7})"},
        BadBodyCase{"invalid_utf8", std::string(R"({"kind":"PodList","items":[{"metadata":)"
                                                R"({"name":"a\xff\xfe"}}]})")},
        BadBodyCase{"long_bad_token",
                    R"({"kind":"PodList","items":[)" + std::string(100000, 'x') + "]}"}),
    [](const ::testing::TestParamInfo<BadBodyCase>& info) { return info.param.name; });

TEST(ParsePodList, deep_nesting_is_no_recursion) {
  // nlohmann's SAX parser keeps its own stack; 1,000,000 levels in a field nobody reads.
  const size_t depth = 1000000;
  const std::string body = R"({"kind":"PodList","items":[],"x":)" + std::string(depth, '[') +
                           std::string(depth, ']') + "}";
  auto list = ParsePodList(body);
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->items, 0u);
}

TEST(ParsePodList, a_2mb_list_of_2300_pods) {
  std::string items;
  std::set<std::string, std::less<>> wanted;
  for (int i = 0; i < 2300; ++i) {
    char uid[37];
    std::snprintf(uid, sizeof uid, "%08x-0000-4000-8000-%012x", i, i);
    if (!items.empty()) items += ",";
    items += Pod(uid, "worker-" + std::to_string(i), "ns-" + std::to_string(i % 7));
    if (i % 100 == 0) wanted.insert(uid);
  }
  const std::string body = List(items);
  ASSERT_GT(body.size(), 2u << 20);
  auto all = ParsePodList(body);
  ASSERT_TRUE(all) << all.error().ToString();
  EXPECT_EQ(all->items, 2300u);
  EXPECT_EQ(all->by_uid.size(), 2300u);
  EXPECT_EQ(all->by_uid.at("000007cf-0000-4000-8000-0000000007cf"),
            (PodName{"ns-4", "worker-1999"}));
  auto some = ParsePodList(body, &wanted);
  ASSERT_TRUE(some);
  EXPECT_EQ(some->by_uid.size(), 23u);
}

TEST(ParsePodList, over_the_bound_is_refused_unread) {
  std::string body = List("");
  body.resize(kMaxPodListBytes + 1, ' ');
  auto list = ParsePodList(body);
  ASSERT_FALSE(list);
  EXPECT_NE(list.error().message().find("bound"), std::string::npos);
}

TEST(PodFieldChecks, follow_the_api_server_rules) {
  EXPECT_TRUE(IsPodUid(kTrainerUid));
  EXPECT_TRUE(IsPodUid(kStaticUid));
  EXPECT_FALSE(IsPodUid("1b4e28ba_2fa1_11d2_883f_0016d3cca427"));
  EXPECT_FALSE(IsPodUid(""));
  EXPECT_TRUE(IsDns1123Label("kube-system"));
  EXPECT_FALSE(IsDns1123Label("-a"));
  EXPECT_FALSE(IsDns1123Label("a-"));
  EXPECT_TRUE(IsDns1123Subdomain("trainer-0.rank-1"));
  EXPECT_FALSE(IsDns1123Subdomain("a..b"));
  EXPECT_FALSE(IsDns1123Subdomain("a."));
  EXPECT_TRUE(IsDns1123Subdomain(std::string(63, 'a') + "." + std::string(63, 'b')));
}

}  // namespace
}  // namespace fabricwatch::jobs
