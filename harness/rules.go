package harness

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/spec"
)

// listRules checks the suite's rule declarations against its cases (all)
// and the rule map, then prints "leaf rule-id" for each selected leaf, in
// leaf order, rule ids in declaration order.
func listRules(s *Suite, all, selected []instance, out io.Writer) error {
	leaves, err := ruleLeaves(s, all)
	if err != nil {
		return err
	}
	sel := map[string]bool{}
	for _, in := range selected {
		sel[in.name] = true
	}
	for _, l := range leaves {
		if sel[l.instance] {
			fmt.Fprintf(out, "%s %s\n", l.leaf, l.rule)
		}
	}
	return nil
}

type ruleLeaf struct{ instance, leaf, rule string }

// ruleLeaves resolves Suite.Rules to leaves: an error names every key that
// matches no case, leaf or declared subtest, and every rule id the map lacks.
func ruleLeaves(s *Suite, all []instance) ([]ruleLeaf, error) {
	if len(s.Rules) == 0 {
		return nil, nil
	}
	m, err := spec.Load()
	if err != nil {
		return nil, err
	}
	var problems []string
	keys := make([]string, 0, len(s.Rules))
	for k := range s.Rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	matched := map[string]bool{}
	var out []ruleLeaf
	for _, in := range all {
		// The keys that name this leaf or one of its subtests.
		for _, k := range keys {
			name, sub, hasSub := strings.Cut(k, "/")
			if name != in.c.Name && name != in.name {
				continue
			}
			leaf := in.name
			if hasSub {
				found := false
				for _, d := range in.c.Subtests {
					found = found || d == sub
				}
				if !found {
					continue
				}
				leaf += "/" + sub
			}
			matched[k] = true
			for _, id := range s.Rules[k] {
				out = append(out, ruleLeaf{instance: in.name, leaf: leaf, rule: id})
			}
		}
	}
	for _, k := range keys {
		if !matched[k] {
			problems = append(problems, fmt.Sprintf("key %q names no case, leaf or declared subtest", k))
		}
		if len(s.Rules[k]) == 0 {
			problems = append(problems, fmt.Sprintf("key %q declares no rule", k))
		}
		for _, id := range s.Rules[k] {
			if _, ok := m.Lookup(id); !ok {
				problems = append(problems, fmt.Sprintf("key %q: rule %q is not in harness/spec/rules.txt", k, id))
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}
