// config/'s names for the JSON field reader of json/ (json/fields.h, json/parse.h): the
// reader the device plugin's configuration is validated with. Nothing is defined here.
#pragma once

#include "json/fields.h"
#include "json/parse.h"

namespace hcashare::config {

using jsonin::DecodeJson;
using jsonin::DescribeMismatch;
using jsonin::DescribeValue;
using jsonin::FieldReader;
using jsonin::ForEachObject;
using jsonin::IssueList;
using jsonin::JoinIndex;
using jsonin::JoinIssues;
using jsonin::JoinKey;
using jsonin::JsonParseOptions;
using jsonin::kMaxJsonDepth;
using jsonin::Need;
using jsonin::ParseJson;
using jsonin::Quote;
using jsonin::WithoutJsonExceptionId;

}  // namespace hcashare::config
