// The example's service worker: every file of the page's origin it fetched once (the page,
// the package's JavaScript and memloop.wasm) answered from the cache first, so the page loads
// offline. The model's files are not kept here: memloop caches them in OPFS, sha256-checked.
const CACHE = 'memloop-example-v1'

self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()))

self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url)
  if (e.request.method !== 'GET' || url.origin !== self.location.origin || url.pathname.includes('/model/')) return
  e.respondWith((async () => {
    const cache = await caches.open(CACHE)
    try {
      const fresh = await fetch(e.request)
      if (fresh.ok) await cache.put(e.request, fresh.clone())
      return fresh
    } catch (err) {
      const cached = await cache.match(e.request)
      if (cached) return cached
      throw err
    }
  })())
})
