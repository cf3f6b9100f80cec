package query

import (
	"context"
	"math"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// maxFleetArraySegments bounds the segments one fleet query carries as arrays (about 45
// bytes each in the query text); a batch with more distinct timelines is priced by the
// JOIN of fleet.sql instead.
const maxFleetArraySegments = 40000

// fleetArrays are the distinct price timelines of an untiered batch, packed for
// fleet_arrays.sql: timeline tl[i] prices location i of the batch.
type fleetArrays struct {
	t0, bucket, nb int64
	tl             []uint32
	bits           []uint16 // TariffBits of each timeline (a function of the price key)
	comps          []componentArrays
}

// fleetTimelines returns the timelines of the batch's locations that can be sent as
// arrays (from memory where a location on the same product was priced under the current
// epoch: Pricer.arraySegments), those locations, and the rest, for the JOIN: locations
// whose timeline is too long (a year of half-hourly prices) or would take the packed
// segments past maxFleetArraySegments.
func (c *Pricer) fleetTimelines(ctx context.Context, scope kwhouse.Scope, b fleetBatch, plans map[string]tariffs.Plan) (fleetArrays, []string, []string, error) {
	number := map[string]uint32{}
	var distinct []costArrays
	var out fleetArrays
	var packed, rest []string
	segments := 0
	for _, id := range b.ids {
		p := plans[id]
		key := p.PriceKey()
		n, seen := number[key]
		if !seen {
			arr, err := c.arraySegments(ctx, costArgs{scope: scope, location: id, plan: p})
			if err != nil {
				return fleetArrays{}, nil, nil, err
			}
			size := 0
			for _, comp := range arr.comps {
				size += len(comp.start)
			}
			if !arr.ok || segments+size > maxFleetArraySegments ||
				(len(distinct) > 0 && (arr.t0 != distinct[0].t0 || arr.bucket != distinct[0].bucket || arr.n != distinct[0].n)) {
				number[key] = 0
				rest = append(rest, id)
				continue
			}
			segments += size
			distinct, out.bits = append(distinct, arr), append(out.bits, p.TariffBits())
			n = uint32(len(distinct))
			number[key] = n
		}
		if n == 0 {
			rest = append(rest, id)
			continue
		}
		packed, out.tl = append(packed, id), append(out.tl, n)
	}
	if len(distinct) == 0 {
		return fleetArrays{}, nil, rest, nil
	}
	out.t0, out.bucket, out.nb = distinct[0].t0, distinct[0].bucket, distinct[0].n
	var bits uint16 // every timeline's tariff bits
	for _, b := range out.bits {
		bits |= b
	}
	for k := range allComponents {
		comp := concatComponent(distinct, k, out.nb)
		comp.Tariffed = bits&(1<<(comp.N-1)) != 0
		out.comps = append(out.comps, comp)
	}
	return out, packed, rest, nil
}

// concatComponent joins component k of every timeline: segment numbers of a timeline's
// bucket index are shifted by the segments before it, and each timeline is followed by as
// many segments starting never as the most steps of any (arrays_find stays in its
// timeline); a timeline without the component gets one gap, priced 0 and covering nothing.
func concatComponent(ts []costArrays, k int, nb int64) componentArrays {
	out := componentArrays{N: ts[0].comps[k].N, Gapless: true, OneConf: true}
	steps, conf1, confs := 0, 0., false
	for _, t := range ts {
		ca := t.comps[k]
		out.Present = out.Present || ca.Present
		steps = max(steps, ca.steps)
		if ca.Present {
			out.Gapless = out.Gapless && !ca.gaps
			out.OneConf = out.OneConf && ca.OneConf && (!confs || ca.conf1 == conf1)
			conf1, confs = ca.conf1, true
		}
	}
	if !out.Present {
		return out
	}
	for _, t := range ts {
		ca := t.comps[k]
		if !ca.Present {
			out.Gapless = false
			ca = componentArrays{first: make([]uint32, nb)}
			ca.push(uint32(t.t0), 0, 0, 0, 0, 1) // one gap: priced 0, covering nothing
			for j := range ca.first {
				ca.first[j] = 1
			}
		}
		shift := uint32(len(out.start))
		out.start, out.price, out.base = append(out.start, ca.start...), append(out.price, ca.price...), append(out.base, ca.base...)
		out.covBase, out.covers, out.conf = append(out.covBase, ca.covBase...), append(out.covers, ca.covers...), append(out.conf, ca.conf...)
		for j := int64(0); j < nb; j++ {
			out.first = append(out.first, ca.first[j]+shift)
		}
		for range steps {
			out.push(math.MaxUint32, 0, 0, 0, 0, 1)
		}
	}
	out.conf1 = conf1
	for i := range steps {
		out.Steps = append(out.Steps, i+1)
	}
	return out
}

// named binds the packed timelines.
func (fa fleetArrays) named() []any {
	ca := costArrays{t0: fa.t0, bucket: fa.bucket, comps: fa.comps}
	return append(ca.named(), chstore.Named("nb", uint32(fa.nb)), chstore.Named("tl", fa.tl), chstore.Named("tl_bits", fa.bits))
}
