(function () {
  function key(cell, numeric) {
    var v = cell.getAttribute('data-v'); if (v === null) v = cell.textContent.trim();
    if (!numeric) return v.toLowerCase();
    var f = parseFloat(v); return isNaN(f) ? -Infinity : f;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var dir = th.getAttribute('data-dir') === 'asc' ? 'desc' : 'asc';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', dir);
        var numeric = th.classList.contains('n'), body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
          var c = x < y ? -1 : x > y ? 1 : 0; return dir === 'asc' ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var search = document.getElementById('filter'), boxes = document.querySelectorAll('input[data-outcome]');
  var count = document.getElementById('shown');
  function apply() {
    var q = search ? search.value.toLowerCase() : '', on = {}, n = 0;
    boxes.forEach(function (b) { on[b.getAttribute('data-outcome')] = b.checked; });
    document.querySelectorAll('#tasks tbody tr').forEach(function (r) {
      var show = on[r.getAttribute('data-outcome')] !== false &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.style.display = show ? '' : 'none'; if (show) n++;
    });
    if (count) count.textContent = n;
  }
  if (search) search.addEventListener('input', apply);
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
})();
