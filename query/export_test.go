package query

// JoinOnly returns a Coster like c that prices every window through the JOINs of cost.sql
// and fleet.sql, the paths tiered tariffs and long market windows take.
func JoinOnly(c *Coster) *Coster {
	d := *c
	d.joinOnly = true
	return &d
}

// FinalAlways returns a Coster like c whose fleet array queries read with FINAL however
// small the batch.
func FinalAlways(c *Coster) *Coster {
	d := *c
	d.finalFrom = 1
	return &d
}
