// The HTML timeline's few lines of script (html-timeline.ts puts this file into the page): a lane
// segment opens its step, hovering one highlights the step in every lane, and expand/collapse all.
(function(){
  function openStep(id){var d=document.getElementById(id);if(d&&d.tagName==='DETAILS'){d.open=true;d.scrollIntoView({block:'start',behavior:'smooth'});}}
  document.querySelectorAll('.seg').forEach(function(a){
    a.addEventListener('click',function(e){e.preventDefault();var id=a.getAttribute('href').slice(1);history.replaceState(null,'','#'+id);openStep(id);});
    a.addEventListener('mouseenter',function(){document.querySelectorAll('.seg[data-step="'+a.dataset.step+'"]').forEach(function(s){s.classList.add('hl');});});
    a.addEventListener('mouseleave',function(){document.querySelectorAll('.seg.hl').forEach(function(s){s.classList.remove('hl');});});
  });
  document.querySelectorAll('button[data-open]').forEach(function(b){
    b.addEventListener('click',function(){var open=b.dataset.open==='1';document.querySelectorAll('details.step').forEach(function(d){d.open=open;});});
  });
  if(location.hash)openStep(location.hash.slice(1));
})();
