package scenarios

// CheckOptions are the limits Check applies.
type CheckOptions struct {
	// MaxMemory refuses scenarios whose estimated peak memory exceeds it,
	// in bytes; 0 means the machine's memory (MachineMemory), negative
	// means no limit.
	MaxMemory int64
}

// Check does everything `hgpsim validate` promises without reading any data
// file: the values (Validate), the resource estimate against the memory
// limit, and the network's assumptions (building the network only when its
// kind does not guarantee them). It returns the estimate; every problem is
// an InvalidError.
func Check(src string, sc Scenario, opt CheckOptions) (Resources, error) {
	if err := sc.Validate(); err != nil {
		return Resources{}, invalid(src, "%s", err.Error())
	}
	res := Estimate(sc)
	limit := opt.MaxMemory
	what := "the limit set by --max-memory"
	if limit == 0 {
		limit, what = MachineMemory(), "this machine's memory"
	}
	if limit > 0 && res.PeakBytes > limit {
		return res, invalid(src, "the run needs %s, more than %s (%s); use fewer clients or a smaller model, or raise --max-memory",
			res, what, Bytes(limit))
	}
	if networkCheckNeedsBuild(sc) {
		if _, err := BuildNetwork(sc); err != nil {
			return res, invalid(src, "%s", err.(*InvalidError).Msg)
		}
	}
	return res, nil
}
