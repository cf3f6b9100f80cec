package plan

import "math"

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
	heap         []item
	level, iter  []int // blockingFlow's level graph and current edges
	queue        []int
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

// run sends as much flow as fits, cheapest paths first: after each Dijkstra, every
// path of zero reduced cost is as cheap as the shortest, and a blocking flow (Dinic's)
// fills them all before the next Dijkstra.
func (g *network) run() {
	g.initialPotentials()
	for g.shortestPath() {
		if g.blockingFlow() == 0 {
			g.augment() // rounding left the shortest path itself out of the level graph
		}
	}
}

// admissible is how far above 0 a reduced cost may be rounded and still count as 0.
const admissible = 1e-10

func (g *network) reduced(e int) float64 {
	return g.cost[e] + g.potential[g.to[e^1]] - g.potential[g.to[e]]
}

// blockingFlow pushes flow along edges of zero reduced cost until no such path is left in
// the level graph of a breadth-first search from the source, and returns how much.
func (g *network) blockingFlow() int64 {
	if g.level == nil {
		g.level, g.iter = make([]int, len(g.first)), make([]int, len(g.first))
	}
	for i := range g.level {
		g.level[i] = -1
	}
	g.level[g.source] = 0
	queue := append(g.queue[:0], g.source)
	for k := 0; k < len(queue); k++ {
		u := queue[k]
		for e := g.first[u]; e >= 0; e = g.next[e] {
			if v := g.to[e]; g.capacity[e] > 0 && g.level[v] < 0 && g.reduced(e) <= admissible {
				g.level[v] = g.level[u] + 1
				queue = append(queue, v)
			}
		}
	}
	g.queue = queue
	if g.level[g.sink] < 0 {
		return 0
	}
	copy(g.iter, g.first)
	var total int64
	for {
		f := g.push(g.source, math.MaxInt64)
		if f == 0 {
			return total
		}
		total += f
	}
}

// push sends up to limit from u towards the sink along the level graph (Dinic's DFS with
// current-edge pointers) and returns how much it sent.
func (g *network) push(u int, limit int64) int64 {
	if u == g.sink {
		return limit
	}
	for ; g.iter[u] >= 0; g.iter[u] = g.next[g.iter[u]] {
		e := g.iter[u]
		v := g.to[e]
		if g.capacity[e] == 0 || g.level[v] != g.level[u]+1 || g.reduced(e) > admissible {
			continue
		}
		if f := g.push(v, min(limit, g.capacity[e])); f > 0 {
			g.capacity[e] -= f
			g.capacity[e^1] += f
			return f
		}
	}
	return 0
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

// shortestPath runs Dijkstra on reduced costs from the source until the sink is settled,
// records the path's edges and moves the potentials; it reports whether the sink is
// reachable. Nodes not settled by then move by the sink's distance, which keeps every
// reduced cost of the residual graph non-negative.
func (g *network) shortestPath() bool {
	inf := math.Inf(1)
	for i := range g.dist {
		g.dist[i], g.prevEdge[i] = inf, -1
	}
	g.dist[g.source] = 0
	g.heap = append(g.heap[:0], item{node: g.source})
	for len(g.heap) > 0 {
		it := g.pop()
		u := it.node
		if it.dist > g.dist[u] {
			continue
		}
		if u == g.sink {
			break
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
				g.heapPush(item{node: v, dist: nd})
			}
		}
	}
	sink := g.dist[g.sink]
	if sink == inf {
		return false
	}
	for i, d := range g.dist {
		g.potential[i] += math.Min(d, sink)
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

// heapPush and pop keep g.heap a binary min-heap by distance (no interface boxing: a plan
// runs a Dijkstra per augmenting path).
func (g *network) heapPush(it item) {
	h := append(g.heap, it)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].dist <= h[i].dist {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	g.heap = h
}

func (g *network) pop() item {
	h := g.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(h) && h[l].dist < h[small].dist {
			small = l
		}
		if r := l + 1; r < len(h) && h[r].dist < h[small].dist {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	g.heap = h
	return top
}
