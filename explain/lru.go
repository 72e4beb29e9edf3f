package explain

import "container/list"

// lru is a least-recently-used cache bounded by a total size and a count.
// It is not safe for concurrent use; the engine guards it with its mutex.
type lru struct {
	maxSize, maxCount int
	size              int
	order             *list.List // front = most recent
	items             map[string]*list.Element
}

type lruItem struct {
	key   string
	value any
	size  int
}

func newLRU(maxSize, maxCount int) *lru {
	return &lru{maxSize: maxSize, maxCount: maxCount, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (any, bool) {
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem).value, true
}

// put stores a value; one larger than a quarter of the size bound is not
// kept, so a single huge result cannot flush the cache.
func (c *lru) put(key string, value any, size int) {
	if size > c.maxSize/4 {
		return
	}
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem)
		c.size += size - it.size
		it.value, it.size = value, size
		c.order.MoveToFront(el)
	} else {
		c.items[key] = c.order.PushFront(&lruItem{key: key, value: value, size: size})
		c.size += size
	}
	for c.order.Len() > 0 && (c.size > c.maxSize || c.order.Len() > c.maxCount) {
		el := c.order.Back()
		it := el.Value.(*lruItem)
		c.order.Remove(el)
		delete(c.items, it.key)
		c.size -= it.size
	}
}

func (c *lru) remove(key string) {
	if el, ok := c.items[key]; ok {
		c.order.Remove(el)
		delete(c.items, key)
		c.size -= el.Value.(*lruItem).size
	}
}

func (c *lru) len() int { return c.order.Len() }
