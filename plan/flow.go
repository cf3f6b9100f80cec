package plan

import (
	"container/heap"
	"math"
)

// network is a flow network solved by successive shortest paths: each round sends flow
// along a cheapest source → sink path of the residual graph until none is left, which
// gives a maximum flow of least cost. Costs may be negative: the graph starts without
// cycles, Bellman-Ford sets the first node potentials, and every later round is a
// Dijkstra on costs made non-negative by those potentials.
type network struct {
	source, sink int
	first        []int // per node: its first edge, -1 for none
	to, next     []int // per edge
	capacity     []int64
	cost         []float64
	potential    []float64
	dist         []float64
	prevEdge     []int
}

func newNetwork(nodes, source, sink int) *network {
	g := &network{source: source, sink: sink, first: make([]int, nodes), potential: make([]float64, nodes),
		dist: make([]float64, nodes), prevEdge: make([]int, nodes)}
	for i := range g.first {
		g.first[i] = -1
	}
	return g
}

// add adds the edge u → v and its residual twin, and returns the edge's index. Edges
// added in topological order let the first potentials settle in one pass.
func (g *network) add(u, v int, capacity int64, cost float64) int {
	e := len(g.to)
	g.to = append(g.to, v, u)
	g.capacity = append(g.capacity, capacity, 0)
	g.cost = append(g.cost, cost, -cost)
	g.next = append(g.next, g.first[u], g.first[v])
	g.first[u], g.first[v] = e, e+1
	return e
}

// flow is what edge e carries: its twin's residual capacity.
func (g *network) flow(e int) int64 { return g.capacity[e^1] }

// run sends as much flow as fits, cheapest paths first.
func (g *network) run() {
	g.initialPotentials()
	for g.shortestPath() {
		g.augment()
	}
}

// initialPotentials are the least path costs from the source (Bellman-Ford; the graph has
// no cycles yet). Nodes the source cannot reach keep 0: nothing ever reaches them.
func (g *network) initialPotentials() {
	inf := math.Inf(1)
	for i := range g.potential {
		g.potential[i] = inf
	}
	g.potential[g.source] = 0
	for changed, rounds := true, 0; changed && rounds < len(g.first); rounds++ {
		changed = false
		for e := 0; e < len(g.to); e += 2 {
			u := g.to[e^1]
			if g.capacity[e] > 0 && g.potential[u] != inf && g.potential[u]+g.cost[e] < g.potential[g.to[e]] {
				g.potential[g.to[e]] = g.potential[u] + g.cost[e]
				changed = true
			}
		}
	}
	for i, p := range g.potential {
		if p == inf {
			g.potential[i] = 0
		}
	}
}

// shortestPath runs Dijkstra on reduced costs from the source, records the path's edges
// and moves the potentials; it reports whether the sink is reachable.
func (g *network) shortestPath() bool {
	inf := math.Inf(1)
	for i := range g.dist {
		g.dist[i], g.prevEdge[i] = inf, -1
	}
	g.dist[g.source] = 0
	q := &queue{{node: g.source}}
	for q.Len() > 0 {
		it := heap.Pop(q).(item)
		u := it.node
		if it.dist > g.dist[u] {
			continue
		}
		for e := g.first[u]; e >= 0; e = g.next[e] {
			if g.capacity[e] == 0 {
				continue
			}
			v := g.to[e]
			// Reduced costs are ≥ 0 up to rounding; a rounding below 0 is taken as 0.
			nd := g.dist[u] + math.Max(0, g.cost[e]+g.potential[u]-g.potential[v])
			if nd < g.dist[v] {
				g.dist[v], g.prevEdge[v] = nd, e
				heap.Push(q, item{node: v, dist: nd})
			}
		}
	}
	if g.dist[g.sink] == inf {
		return false
	}
	for i, d := range g.dist {
		if d != inf {
			g.potential[i] += d
		}
	}
	return true
}

// augment pushes the path's bottleneck along the edges shortestPath recorded.
func (g *network) augment() {
	push := int64(math.MaxInt64)
	for v := g.sink; v != g.source; v = g.to[g.prevEdge[v]^1] {
		push = min(push, g.capacity[g.prevEdge[v]])
	}
	for v := g.sink; v != g.source; v = g.to[g.prevEdge[v]^1] {
		e := g.prevEdge[v]
		g.capacity[e] -= push
		g.capacity[e^1] += push
	}
}

type item struct {
	node int
	dist float64
}

// queue is a binary min-heap of nodes by distance.
type queue []item

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].dist < q[j].dist }
func (q queue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)        { *q = append(*q, x.(item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
