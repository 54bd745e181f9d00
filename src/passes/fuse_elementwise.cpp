// Exact-mode fusion of elementwise chains into one pass over memory (see passes.h).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "passes/passes.h"

namespace onemodel::impl {
int FuseElementwiseChains(Graph& g) {
  std::unordered_map<std::string, int> readers = CountReaders(g);
  // The nodes reading each value (a node reading it twice counts twice in `readers`).
  std::unordered_map<std::string, std::vector<size_t>> readers_of;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) readers_of[in].push_back(i);
  std::vector<bool> taken(g.nodes.size(), false), drop(g.nodes.size(), false);
  std::vector<std::pair<size_t, Node>> fused_at;  // index of the chain's last node -> fused node
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (taken[i] || !IsChainableElementwise(g.nodes[i])) continue;
    // Grow a region from node i: repeatedly take the first node (in graph order) that
    // reads a value the region makes, while it is chainable. The region is valid when
    // every value it makes is read only inside it, except the value of its last node.
    std::vector<size_t> chain{i};
    std::unordered_set<size_t> in_region{i};
    auto leaks = [&](const std::string& v) {                    // read outside the region, or a graph output
      if (readers[v] > int(readers_of[v].size())) return true;  // graph output or subgraph reference
      for (size_t r : readers_of[v])
        if (!in_region.count(r)) return true;
      return false;
    };
    auto valid = [&] {
      for (size_t k = 0; k + 1 < chain.size(); ++k)
        if (leaks(g.nodes[chain[k]].outputs[0])) return false;
      return true;
    };
    auto valid_sorted = [&] {
      std::sort(chain.begin(), chain.end());
      return valid();
    };
    for (;;) {
      size_t next = g.nodes.size();
      for (size_t k : chain)
        for (size_t r : readers_of[g.nodes[k].outputs[0]])
          if (!in_region.count(r)) next = std::min(next, r);
      if (next == g.nodes.size() || taken[next] || !IsChainableElementwise(g.nodes[next])) break;
      chain.push_back(next);
      in_region.insert(next);
    }
    while (chain.size() >= 2 && !valid_sorted()) {
      in_region.erase(chain.back());
      chain.pop_back();
    }
    if (chain.size() < 2) continue;
    std::sort(chain.begin(), chain.end());
    // The fused node: inputs are the chain's input (input 0 of the first node for a unary
    // first node; for a binary one, its input 0) and then every other operand in order;
    // the body holds the original nodes, reading the fused node's inputs by name.
    std::vector<const Node*> members;
    for (size_t k : chain) members.push_back(&g.nodes[k]);
    Node f = FusedNode("ElementwiseChain",
                       g.nodes[chain.front()].name + " (elementwise chain of " + std::to_string(chain.size()) + ")",
                       members, g.nodes[chain.back()].outputs[0]);
    for (size_t k : chain) {
      taken[k] = true;
      drop[k] = true;
    }
    fused_at.push_back({chain.back(), std::move(f)});
    ++fused;
  }
  if (fused) PlaceFused(g, drop, fused_at);
  return fused;
}

}  // namespace onemodel::impl
