// in_transaction(): runs a store operation inside a write transaction (or a savepoint within the
// caller's) and commits only when the operation succeeded; on any error the guard rolls back.
#pragma once

#include "plansight/store/store.h"

namespace plansight::store::detail {

template <class F>
auto in_transaction(Store& store, F&& body) -> decltype(body()) {
  auto tx = store.transaction();
  if (!tx) return tx.errors();
  auto result = body();
  if (!result) return result;
  if (auto st = tx->commit(); !st) return st.errors();
  return result;
}

}  // namespace plansight::store::detail
