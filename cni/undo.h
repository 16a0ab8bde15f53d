// UndoStack: the undo actions of the steps done so far, run in reverse unless committed.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/status.h"

namespace hcashare::cni {

class UndoStack {
 public:
  UndoStack() = default;
  UndoStack(const UndoStack&) = delete;
  UndoStack& operator=(const UndoStack&) = delete;
  // Runs the pending actions (see Rollback) unless Commit() was called.
  ~UndoStack() { (void)Rollback(); }

  // Records how to undo the step just done; `what` names it in logs.
  void Push(std::string what, std::function<Status()> undo) {
    actions_.emplace_back(std::move(what), std::move(undo));
  }
  // Keeps every step: nothing is undone.
  void Commit() { actions_.clear(); }
  // Undoes every step, newest first. A failing action is logged and the rest still run.
  // Returns the first failure.
  Status Rollback() {
    Status first;
    while (!actions_.empty()) {
      auto [what, undo] = std::move(actions_.back());
      actions_.pop_back();
      Status st = undo();
      if (!st.ok()) {
        LogError("rollback step failed", {{"step", what}, {"error", st.ToString()}});
        if (first.ok()) first = st;
      } else {
        LogDebug("rolled back", {{"step", what}});
      }
    }
    return first;
  }

 private:
  std::vector<std::pair<std::string, std::function<Status()>>> actions_;
};

}  // namespace hcashare::cni
