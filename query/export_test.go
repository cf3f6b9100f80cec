package query

// JoinOnly returns a Coster like c that prices every window through the JOINs of cost.sql
// and fleet.sql, the paths tiered tariffs and long market windows take.
func JoinOnly(c *Coster) *Coster {
	d := *c
	d.joinOnly = true
	return &d
}
