package main

// shrink reduces a failing scenario to a smaller one that still fails
// (fails(s) is true): delta debugging (ddmin) over its steps, then whole
// groups, then single bits of each mask, repeated until nothing more goes.
// Every candidate is a real run, so the result is a scenario that fails.
func shrink(s *Scenario, fails func(*Scenario) bool) *Scenario {
	cur := clone(s)
	for changed := true; changed; {
		changed = false
		if c := ddminSteps(cur, fails); len(c.Steps) < len(cur.Steps) {
			cur, changed = c, true
		}
		for g := len(cur.Groups) - 1; g >= 0 && len(cur.Groups) > 1; g-- {
			if c := dropGroup(cur, g); fails(c) {
				cur, changed = c, true
			}
		}
		for i := range cur.Steps {
			for bit := uint32(1); bit != 0; bit <<= 1 {
				if cur.Steps[i].Mask&bit == 0 || cur.Steps[i].Mask == bit {
					continue
				}
				c := clone(cur)
				c.Steps[i].Mask &^= bit
				if fails(c) {
					cur, changed = c, true
				}
			}
		}
	}
	return cur
}

func clone(s *Scenario) *Scenario {
	c := *s
	c.Groups = append([]string(nil), s.Groups...)
	c.Steps = append([]Step(nil), s.Steps...)
	return &c
}

// ddminSteps is Zeller's ddmin over the step list.
func ddminSteps(s *Scenario, fails func(*Scenario) bool) *Scenario {
	steps := s.Steps
	with := func(st []Step) *Scenario {
		c := clone(s)
		c.Steps = append([]Step(nil), st...)
		return c
	}
	n := 2
	for len(steps) >= 2 {
		chunk := (len(steps) + n - 1) / n
		reduced := false
		for start := 0; start < len(steps); start += chunk {
			end := min(start+chunk, len(steps))
			rest := append(append([]Step(nil), steps[:start]...), steps[end:]...)
			if len(rest) > 0 && fails(with(rest)) {
				steps = rest
				n = max(n-1, 2)
				reduced = true
				break
			}
		}
		if !reduced {
			if n >= len(steps) {
				break
			}
			n = min(n*2, len(steps))
		}
	}
	return with(steps)
}

// dropGroup removes group g and its steps, renumbering the later groups.
func dropGroup(s *Scenario, g int) *Scenario {
	c := clone(s)
	c.Groups = append(c.Groups[:g:g], s.Groups[g+1:]...)
	c.Steps = c.Steps[:0]
	for _, st := range s.Steps {
		isGroupStep := st.Op == "mark" || st.Op == "markw" || st.Op == "watch" || st.Op == "rmwatch"
		if isGroupStep && st.Group == g {
			continue
		}
		if isGroupStep && st.Group > g {
			st.Group--
		}
		c.Steps = append(c.Steps, st)
	}
	return c
}
