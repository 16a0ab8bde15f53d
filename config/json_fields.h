// config/'s names for the JSON field reader and document reader of json/ (json/fields.h,
// json/parse.h, json/document.h): what the device plugin's configuration is read and
// validated with. Nothing is defined here.
#pragma once

#include "json/document.h"
#include "json/fields.h"
#include "json/parse.h"

namespace hcashare::config {

using jsonin::DecodeJson;
using jsonin::DescribeMismatch;
using jsonin::DescribeValue;
using jsonin::Document;
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
using jsonin::ParseJsonText;
using jsonin::ParseYamlText;
using jsonin::Quote;
using jsonin::WithoutJsonExceptionId;

}  // namespace hcashare::config
